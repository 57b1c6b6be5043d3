-- A bulk import (cms import, src/domain/import/bulkLoad.ts) sets `cms.bulk_import` for its own
-- transaction: the insert triggers then leave the labels, the tallies and the site's generation to
-- it, and it settles them once, set-based, before it commits (content_bulk_import_settle). An import
-- is one transaction of thousands of INSERT statements; row versions an open transaction makes and
-- supersedes cannot be pruned, so a statement's trigger updating the same ~400 tally rows and the
-- site's one generation row each time left every later statement longer chains to walk (200k
-- contents: 187,187 tally updates, 7,604 of the generation row; the rate fell from 2,600 to 1,400
-- contents a second). Every other writer, and every update or delete, is maintained as before.

CREATE OR REPLACE FUNCTION "content_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('cms.bulk_import', true) = 'on' THEN
        RETURN NULL;
    END IF;
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

CREATE OR REPLACE FUNCTION "generation_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('cms.bulk_import', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM "content_generation_advance"(ARRAY(SELECT DISTINCT "siteId" FROM new_rows));
    RETURN NULL;
END
$$;

-- What the insert triggers skipped, for the sites an import wrote to: every content's labels (ON
-- CONFLICT: the ones the site had stay), each tally counted again from the contents, the generation
-- advanced once. Tally keys and sites in key order, as the triggers take them.
CREATE FUNCTION "content_bulk_import_settle"(sites integer[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "content_generation_advance"(sites);

    INSERT INTO "ContentLabel" ("siteId", "kind", "name", "contentId")
    SELECT DISTINCT n."siteId", l."kind", lower(l."item"), n."id"
    FROM "Content" AS n
    CROSS JOIN LATERAL (
        SELECT 0 AS "kind", item FROM unnest(string_to_array(n."groupNames", ',')) AS item
        UNION ALL
        SELECT 1, item FROM unnest(string_to_array(n."tagNames", ',')) AS item
    ) AS l
    WHERE n."siteId" = ANY(sites) AND l."item" <> ''
    ON CONFLICT DO NOTHING;

    INSERT INTO "ContentTally" ("siteId", "channelId", "checked", "count")
    SELECT t."siteId", t."channelId", t."checked", COALESCE(c."count", 0)
    FROM (
        SELECT "siteId", "channelId", "checked" FROM "ContentTally" WHERE "siteId" = ANY(sites)
        UNION
        SELECT DISTINCT "siteId", "channelId", "checked" FROM "Content" WHERE "siteId" = ANY(sites) AND NOT "recycled"
    ) AS t
    LEFT JOIN (
        SELECT "siteId", "channelId", "checked", COUNT(*)::integer AS "count" FROM "Content"
        WHERE "siteId" = ANY(sites) AND NOT "recycled" GROUP BY "siteId", "channelId", "checked"
    ) AS c USING ("siteId", "channelId", "checked")
    ORDER BY t."siteId", t."channelId", t."checked"
    ON CONFLICT ("siteId", "channelId", "checked") DO UPDATE SET "count" = EXCLUDED."count";
END
$$;
