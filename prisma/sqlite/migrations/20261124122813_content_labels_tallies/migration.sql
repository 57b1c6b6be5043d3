-- CreateTable
CREATE TABLE "ContentLabel" (
    "siteId" INTEGER NOT NULL,
    "kind" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "contentId" INTEGER NOT NULL,

    PRIMARY KEY ("siteId", "kind", "name", "contentId")
);

-- CreateTable
CREATE TABLE "ContentTally" (
    "siteId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,
    "checked" BOOLEAN NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("siteId", "channelId", "checked")
);

-- CreateIndex
CREATE INDEX "ContentLabel_contentId_idx" ON "ContentLabel"("contentId");

-- Triggers (hand-written): ContentLabel and ContentTally follow every write to Content, whoever makes
-- it (the service, an import, the CLI, another process or plain SQL), inside the writing transaction.

-- A comma-joined list becomes a JSON array for json_each (triggers cannot hold a recursive CTE):
-- backslashes and quotes are escaped first, then each comma ends one item.
CREATE TRIGGER "Content_labels_insert" AFTER INSERT ON "Content" BEGIN
    INSERT OR IGNORE INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
    SELECT NEW."siteId", 0, lower(j."value"), NEW."id"
    FROM json_each('["' || replace(replace(replace(NEW."groupNames", '\', '\\'), '"', '\"'), ',', '","') || '"]') AS j
    WHERE j."value" <> '';
    INSERT OR IGNORE INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
    SELECT NEW."siteId", 1, lower(j."value"), NEW."id"
    FROM json_each('["' || replace(replace(replace(NEW."tagNames", '\', '\\'), '"', '\"'), ',', '","') || '"]') AS j
    WHERE j."value" <> '';
END;

CREATE TRIGGER "Content_labels_update" AFTER UPDATE OF "siteId", "groupNames", "tagNames" ON "Content" BEGIN
    DELETE FROM "ContentLabel" WHERE "contentId" = OLD."id";
    INSERT OR IGNORE INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
    SELECT NEW."siteId", 0, lower(j."value"), NEW."id"
    FROM json_each('["' || replace(replace(replace(NEW."groupNames", '\', '\\'), '"', '\"'), ',', '","') || '"]') AS j
    WHERE j."value" <> '';
    INSERT OR IGNORE INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
    SELECT NEW."siteId", 1, lower(j."value"), NEW."id"
    FROM json_each('["' || replace(replace(replace(NEW."tagNames", '\', '\\'), '"', '\"'), ',', '","') || '"]') AS j
    WHERE j."value" <> '';
END;

CREATE TRIGGER "Content_labels_delete" AFTER DELETE ON "Content" BEGIN
    DELETE FROM "ContentLabel" WHERE "contentId" = OLD."id";
END;

-- Only contents outside the recycle bin are counted.
CREATE TRIGGER "Content_tally_insert" AFTER INSERT ON "Content" WHEN NOT NEW."recycled" BEGIN
    INSERT INTO "ContentTally" ("siteId", "channelId", "checked", "count")
    VALUES (NEW."siteId", NEW."channelId", NEW."checked", 1)
    ON CONFLICT ("siteId", "channelId", "checked") DO UPDATE SET "count" = "count" + 1;
END;

CREATE TRIGGER "Content_tally_delete" AFTER DELETE ON "Content" WHEN NOT OLD."recycled" BEGIN
    UPDATE "ContentTally" SET "count" = "count" - 1
    WHERE "siteId" = OLD."siteId" AND "channelId" = OLD."channelId" AND "checked" = OLD."checked";
END;

CREATE TRIGGER "Content_tally_update_old" AFTER UPDATE OF "siteId", "channelId", "checked", "recycled" ON "Content"
WHEN NOT OLD."recycled" BEGIN
    UPDATE "ContentTally" SET "count" = "count" - 1
    WHERE "siteId" = OLD."siteId" AND "channelId" = OLD."channelId" AND "checked" = OLD."checked";
END;

CREATE TRIGGER "Content_tally_update_new" AFTER UPDATE OF "siteId", "channelId", "checked", "recycled" ON "Content"
WHEN NOT NEW."recycled" BEGIN
    INSERT INTO "ContentTally" ("siteId", "channelId", "checked", "count")
    VALUES (NEW."siteId", NEW."channelId", NEW."checked", 1)
    ON CONFLICT ("siteId", "channelId", "checked") DO UPDATE SET "count" = "count" + 1;
END;

-- Existing contents.
INSERT OR IGNORE INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
SELECT c."siteId", 0, lower(j."value"), c."id"
FROM "Content" AS c,
    json_each('["' || replace(replace(replace(c."groupNames", '\', '\\'), '"', '\"'), ',', '","') || '"]') AS j
WHERE j."value" <> '';
INSERT OR IGNORE INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
SELECT c."siteId", 1, lower(j."value"), c."id"
FROM "Content" AS c,
    json_each('["' || replace(replace(replace(c."tagNames", '\', '\\'), '"', '\"'), ',', '","') || '"]') AS j
WHERE j."value" <> '';
INSERT INTO "ContentTally" ("siteId", "channelId", "checked", "count")
SELECT "siteId", "channelId", "checked", COUNT(*) FROM "Content" WHERE NOT "recycled"
GROUP BY "siteId", "channelId", "checked";
