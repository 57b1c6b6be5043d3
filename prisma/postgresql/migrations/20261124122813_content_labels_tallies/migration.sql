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
-- Statement-level with transition tables: a bulk insert (an import) costs one set-based statement
-- per table, not one function call per row (per-row triggers made a 100k insert 10x slower).
-- Tally keys are written in key order, so two bulk writers lock tally rows in the same order.
-- (Transition tables are visible only in the trigger's own function, hence the repetition.)

CREATE FUNCTION "content_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
    SELECT DISTINCT n."siteId", l."kind", lower(l."item"), n."id"
    FROM new_rows AS n
    CROSS JOIN LATERAL (
        SELECT 0 AS "kind", item FROM unnest(string_to_array(n."groupNames", ',')) AS item
        UNION ALL
        SELECT 1, item FROM unnest(string_to_array(n."tagNames", ',')) AS item
    ) AS l
    WHERE l."item" <> ''
    ON CONFLICT DO NOTHING;

    INSERT INTO "ContentTally" ("siteId", "channelId", "checked", "count")
    SELECT "siteId", "channelId", "checked", COUNT(*)::integer FROM new_rows WHERE NOT "recycled"
    GROUP BY "siteId", "channelId", "checked" ORDER BY "siteId", "channelId", "checked"
    ON CONFLICT ("siteId", "channelId", "checked") DO UPDATE SET "count" = "ContentTally"."count" + EXCLUDED."count";
    RETURN NULL;
END
$$;

CREATE FUNCTION "content_after_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM "ContentLabel" WHERE "contentId" IN (SELECT "id" FROM old_rows);

    UPDATE "ContentTally" AS t SET "count" = t."count" - d."n"
    FROM (
        SELECT "siteId", "channelId", "checked", COUNT(*)::integer AS "n" FROM old_rows WHERE NOT "recycled"
        GROUP BY "siteId", "channelId", "checked" ORDER BY "siteId", "channelId", "checked"
    ) AS d
    WHERE t."siteId" = d."siteId" AND t."channelId" = d."channelId" AND t."checked" = d."checked";
    RETURN NULL;
END
$$;

-- Only the rows whose labelled or counted columns changed are touched (an update of hits is not).
CREATE FUNCTION "content_after_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM "ContentLabel" WHERE "contentId" IN (
        SELECT o."id" FROM old_rows AS o JOIN new_rows AS n ON n."id" = o."id"
        WHERE (o."siteId", o."groupNames", o."tagNames") IS DISTINCT FROM (n."siteId", n."groupNames", n."tagNames")
    );
    INSERT INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
    SELECT DISTINCT n."siteId", l."kind", lower(l."item"), n."id"
    FROM old_rows AS o
    JOIN new_rows AS n ON n."id" = o."id"
    CROSS JOIN LATERAL (
        SELECT 0 AS "kind", item FROM unnest(string_to_array(n."groupNames", ',')) AS item
        UNION ALL
        SELECT 1, item FROM unnest(string_to_array(n."tagNames", ',')) AS item
    ) AS l
    WHERE l."item" <> ''
        AND (o."siteId", o."groupNames", o."tagNames") IS DISTINCT FROM (n."siteId", n."groupNames", n."tagNames")
    ON CONFLICT DO NOTHING;

    -- Net change per tally key: -1 for each changed row's old key, +1 for its new key.
    INSERT INTO "ContentTally" ("siteId", "channelId", "checked", "count")
    SELECT k."siteId", k."channelId", k."checked", SUM(k."delta")::integer
    FROM (
        SELECT o."siteId", o."channelId", o."checked", -1 AS "delta"
        FROM old_rows AS o JOIN new_rows AS n ON n."id" = o."id"
        WHERE NOT o."recycled"
            AND (o."siteId", o."channelId", o."checked", o."recycled") IS DISTINCT FROM (n."siteId", n."channelId", n."checked", n."recycled")
        UNION ALL
        SELECT n."siteId", n."channelId", n."checked", 1
        FROM old_rows AS o JOIN new_rows AS n ON n."id" = o."id"
        WHERE NOT n."recycled"
            AND (o."siteId", o."channelId", o."checked", o."recycled") IS DISTINCT FROM (n."siteId", n."channelId", n."checked", n."recycled")
    ) AS k
    GROUP BY k."siteId", k."channelId", k."checked"
    HAVING SUM(k."delta") <> 0
    ORDER BY k."siteId", k."channelId", k."checked"
    ON CONFLICT ("siteId", "channelId", "checked") DO UPDATE SET "count" = "ContentTally"."count" + EXCLUDED."count";
    RETURN NULL;
END
$$;

CREATE TRIGGER "Content_after_insert" AFTER INSERT ON "Content"
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "content_after_insert"();
CREATE TRIGGER "Content_after_delete" AFTER DELETE ON "Content"
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "content_after_delete"();
CREATE TRIGGER "Content_after_update" AFTER UPDATE ON "Content"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "content_after_update"();

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
