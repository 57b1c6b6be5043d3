-- CreateTable
CREATE TABLE "ContentGeneration" (
    "siteId" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "generation" BIGINT NOT NULL DEFAULT 0
);

-- CreateTable
CREATE TABLE "ContentCount" (
    "siteId" INTEGER NOT NULL,
    "slot" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "generation" BIGINT NOT NULL,
    "count" INTEGER NOT NULL,
    "marks" TEXT NOT NULL DEFAULT '',

    PRIMARY KEY ("siteId", "slot")
);

-- Triggers (hand-written): every write to a site's contents, or to its channels (a channel filter
-- reads the channel tree), advances the site's generation inside the writing transaction, whoever
-- makes it (the service, an import, the CLI, another process or plain SQL). A count read in one
-- statement together with the generation is exact for that generation; once a write commits, the
-- generation differs and the stored count is no longer used.
CREATE TRIGGER "Content_generation_insert" AFTER INSERT ON "Content" BEGIN
    INSERT INTO "ContentGeneration" ("siteId", "generation") VALUES (NEW."siteId", 1)
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "generation" + 1;
END;

CREATE TRIGGER "Content_generation_update" AFTER UPDATE ON "Content" BEGIN
    INSERT INTO "ContentGeneration" ("siteId", "generation") VALUES (NEW."siteId", 1)
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "generation" + 1;
    INSERT INTO "ContentGeneration" ("siteId", "generation")
    SELECT OLD."siteId", 1 WHERE OLD."siteId" <> NEW."siteId"
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "generation" + 1;
END;

CREATE TRIGGER "Content_generation_delete" AFTER DELETE ON "Content" BEGIN
    INSERT INTO "ContentGeneration" ("siteId", "generation") VALUES (OLD."siteId", 1)
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "generation" + 1;
END;

CREATE TRIGGER "Channel_generation_insert" AFTER INSERT ON "Channel" BEGIN
    INSERT INTO "ContentGeneration" ("siteId", "generation") VALUES (NEW."siteId", 1)
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "generation" + 1;
END;

CREATE TRIGGER "Channel_generation_update" AFTER UPDATE ON "Channel" BEGIN
    INSERT INTO "ContentGeneration" ("siteId", "generation") VALUES (NEW."siteId", 1)
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "generation" + 1;
    INSERT INTO "ContentGeneration" ("siteId", "generation")
    SELECT OLD."siteId", 1 WHERE OLD."siteId" <> NEW."siteId"
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "generation" + 1;
END;

CREATE TRIGGER "Channel_generation_delete" AFTER DELETE ON "Channel" BEGIN
    INSERT INTO "ContentGeneration" ("siteId", "generation") VALUES (OLD."siteId", 1)
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "generation" + 1;
END;

-- Hand-written (SQLite only; the model cannot express an index on an expression): the narrow list
-- index plus the lowered title, so that a title Like/NotLike within a site, channel set and flags
-- is tested on index entries instead of reading each candidate's 2 KB row. The list compiles a
-- title pattern to lower("title") LIKE pattern, the same answer as "title" LIKE pattern (SQLite's
-- LIKE and lower() both fold ASCII letters only). PostgreSQL cannot hold it: a btree entry over
-- 2,704 bytes fails the insert, and imported titles have no length bound; it has the trigram index.
CREATE INDEX "Content_list_title_idx" ON "Content"("siteId", "recycled", "channelId", "checked", "top", "recommend", "hot", "color", "taxis", "id", lower("title"));
