-- A hit (src/domain/contents/hits.ts) changes only a content's hit counters, its lastHitsDate and
-- its version: the site's stored totals and page marks stay valid, since a list whose filter or
-- order reads those columns never uses them (src/domain/contents/query.ts, `readsHitCounters`).
-- PostgreSQL refuses a column list on a trigger with transition tables, so the hit statement
-- marks its own transaction instead (set_config('cms.counting_hits', 'on', true): local to it,
-- gone at its end) and the update trigger of Content leaves the generation alone for it.
CREATE FUNCTION "content_generation_after_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('cms.counting_hits', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM "content_generation_advance"(ARRAY(
        SELECT "siteId" FROM new_rows UNION SELECT "siteId" FROM old_rows));
    RETURN NULL;
END
$$;

DROP TRIGGER "Content_advance_generation_update" ON "Content";
CREATE TRIGGER "Content_advance_generation_update" AFTER UPDATE ON "Content"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "content_generation_after_update"();
