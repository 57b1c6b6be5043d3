-- CreateTable
CREATE TABLE "ContentGeneration" (
    "siteId" INTEGER NOT NULL,
    "generation" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "ContentGeneration_pkey" PRIMARY KEY ("siteId")
);

-- CreateTable
CREATE TABLE "ContentCount" (
    "siteId" INTEGER NOT NULL,
    "slot" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "generation" BIGINT NOT NULL,
    "count" INTEGER NOT NULL,
    "marks" TEXT NOT NULL DEFAULT '',

    CONSTRAINT "ContentCount_pkey" PRIMARY KEY ("siteId","slot")
);

-- Triggers (hand-written): every write to a site's contents, or to its channels (a channel filter
-- reads the channel tree), advances the site's generation inside the writing transaction, whoever
-- makes it (the service, an import, the CLI, another process or plain SQL). A count read in one
-- statement together with the generation sees one snapshot, so it is exact for that generation;
-- once a write commits, the generation differs and the stored count is no longer used.
-- Statement-level: a bulk insert advances each site once; sites are written in key order, so two
-- writers lock generation rows in the same order. The Content triggers are named to fire before
-- "Content_after_*" (PostgreSQL fires them in name order): a writer waits for the site's
-- generation row before it takes any tally row, so two writers of a site cannot each hold a tally
-- row the other needs while one waits for the generation row.
CREATE FUNCTION "content_generation_advance"(sites integer[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO "ContentGeneration" ("siteId", "generation")
    SELECT DISTINCT s, 1 FROM unnest(sites) AS s WHERE s IS NOT NULL ORDER BY s
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "ContentGeneration"."generation" + 1;
$$;

CREATE FUNCTION "generation_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "content_generation_advance"(ARRAY(SELECT DISTINCT "siteId" FROM new_rows));
    RETURN NULL;
END
$$;

CREATE FUNCTION "generation_after_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "content_generation_advance"(ARRAY(
        SELECT "siteId" FROM new_rows UNION SELECT "siteId" FROM old_rows));
    RETURN NULL;
END
$$;

CREATE FUNCTION "generation_after_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "content_generation_advance"(ARRAY(SELECT DISTINCT "siteId" FROM old_rows));
    RETURN NULL;
END
$$;

CREATE TRIGGER "Content_advance_generation_insert" AFTER INSERT ON "Content"
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "generation_after_insert"();
CREATE TRIGGER "Content_advance_generation_update" AFTER UPDATE ON "Content"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "generation_after_update"();
CREATE TRIGGER "Content_advance_generation_delete" AFTER DELETE ON "Content"
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "generation_after_delete"();
CREATE TRIGGER "Channel_generation_insert" AFTER INSERT ON "Channel"
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "generation_after_insert"();
CREATE TRIGGER "Channel_generation_update" AFTER UPDATE ON "Channel"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "generation_after_update"();
CREATE TRIGGER "Channel_generation_delete" AFTER DELETE ON "Channel"
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "generation_after_delete"();
-- TRUNCATE says nothing of its rows: every site's generation advances.
CREATE FUNCTION "generation_after_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "ContentGeneration" SET "generation" = "generation" + 1;
    RETURN NULL;
END
$$;
CREATE TRIGGER "Content_advance_generation_truncate" AFTER TRUNCATE ON "Content"
FOR EACH STATEMENT EXECUTE FUNCTION "generation_after_truncate"();
CREATE TRIGGER "Channel_generation_truncate" AFTER TRUNCATE ON "Channel"
FOR EACH STATEMENT EXECUTE FUNCTION "generation_after_truncate"();
