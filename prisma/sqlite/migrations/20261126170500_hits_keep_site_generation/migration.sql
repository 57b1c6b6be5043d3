-- A hit (src/domain/contents/hits.ts) changes only a content's hit counters, its lastHitsDate and
-- its version: the site's stored totals and page marks stay valid, since a list whose filter or
-- order reads those columns never uses them (src/domain/contents/query.ts, `readsHitCounters`).
-- So the generation advances on an update of any other column. The list below is every column of
-- Content but hits, hitsByDay, hitsByWeek, hitsByMonth, lastHitsDate and version;
-- test/contents/hitsGeneration.test.ts holds it to the model.
DROP TRIGGER "Content_generation_update";

CREATE TRIGGER "Content_generation_update" AFTER UPDATE OF
    "id", "guid", "siteId", "channelId", "adminId", "lastEditAdminId", "userId", "taxis",
    "groupNames", "tagNames", "sourceId", "referenceId", "templateId", "checked", "checkedLevel",
    "downloads", "imageUrlCount", "videoUrlCount", "fileUrlCount", "title", "subTitle", "imageUrl",
    "videoUrl", "fileUrl", "body", "summary", "author", "source", "top", "recommend", "hot",
    "color", "linkType", "linkUrl", "addUserName", "lastEditUserName", "writingUserName",
    "addDate", "createdDate", "lastModifiedDate", "lastEditDate", "settings", "recycled",
    "recycledDate"
ON "Content" BEGIN
    INSERT INTO "ContentGeneration" ("siteId", "generation") VALUES (NEW."siteId", 1)
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "generation" + 1;
    INSERT INTO "ContentGeneration" ("siteId", "generation")
    SELECT OLD."siteId", 1 WHERE OLD."siteId" <> NEW."siteId"
    ON CONFLICT ("siteId") DO UPDATE SET "generation" = "generation" + 1;
END;
