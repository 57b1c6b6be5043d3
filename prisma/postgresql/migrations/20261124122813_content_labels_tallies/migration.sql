-- CreateTable
CREATE TABLE "ContentLabel" (
    "siteId" INTEGER NOT NULL,
    "kind" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "contentId" INTEGER NOT NULL,

    CONSTRAINT "ContentLabel_pkey" PRIMARY KEY ("siteId","kind","name","contentId")
);

-- CreateTable
CREATE TABLE "ContentTally" (
    "siteId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,
    "checked" BOOLEAN NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "ContentTally_pkey" PRIMARY KEY ("siteId","channelId","checked")
);

-- CreateIndex
CREATE INDEX "ContentLabel_contentId_idx" ON "ContentLabel"("contentId");

-- Triggers (hand-written): ContentLabel and ContentTally follow every write to Content, whoever makes
-- it (the service, an import, the CLI, another process or plain SQL), inside the writing transaction.
CREATE FUNCTION "content_labels_sync"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM "ContentLabel" WHERE "contentId" = OLD."id";
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
        SELECT NEW."siteId", 0, lower(item), NEW."id" FROM unnest(string_to_array(NEW."groupNames", ',')) AS item
        WHERE item <> ''
        UNION
        SELECT NEW."siteId", 1, lower(item), NEW."id" FROM unnest(string_to_array(NEW."tagNames", ',')) AS item
        WHERE item <> ''
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "Content_labels" AFTER INSERT OR DELETE OR UPDATE OF "siteId", "groupNames", "tagNames"
ON "Content" FOR EACH ROW EXECUTE FUNCTION "content_labels_sync"();

-- Only contents outside the recycle bin are counted.
CREATE FUNCTION "content_tally_sync"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND NOT OLD."recycled" THEN
        UPDATE "ContentTally" SET "count" = "count" - 1
        WHERE "siteId" = OLD."siteId" AND "channelId" = OLD."channelId" AND "checked" = OLD."checked";
    END IF;
    IF TG_OP <> 'DELETE' AND NOT NEW."recycled" THEN
        INSERT INTO "ContentTally" ("siteId", "channelId", "checked", "count")
        VALUES (NEW."siteId", NEW."channelId", NEW."checked", 1)
        ON CONFLICT ("siteId", "channelId", "checked") DO UPDATE SET "count" = "ContentTally"."count" + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "Content_tally" AFTER INSERT OR DELETE OR UPDATE OF "siteId", "channelId", "checked", "recycled"
ON "Content" FOR EACH ROW EXECUTE FUNCTION "content_tally_sync"();

-- Existing contents.
INSERT INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
SELECT c."siteId", 0, lower(item), c."id" FROM "Content" AS c, unnest(string_to_array(c."groupNames", ',')) AS item
WHERE item <> ''
UNION
SELECT c."siteId", 1, lower(item), c."id" FROM "Content" AS c, unnest(string_to_array(c."tagNames", ',')) AS item
WHERE item <> ''
ON CONFLICT DO NOTHING;
INSERT INTO "ContentTally" ("siteId", "channelId", "checked", "count")
SELECT "siteId", "channelId", "checked", COUNT(*) FROM "Content" WHERE NOT "recycled"
GROUP BY "siteId", "channelId", "checked";

-- Fresh statistics, or the planner takes ContentLabel for empty until autovacuum analyses it, and
-- scans a whole site's labels instead of looking the names up.
ANALYZE "ContentLabel";
ANALYZE "ContentTally";
