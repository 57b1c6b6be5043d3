-- Public views of stl/sqlContents (README, "SQL sandbox"): the only relations the sandbox may read,
-- shaped like the original system's tables. Dates are UTC text 'YYYY-MM-DD HH:MM:SS' and booleans the
-- words 'True'/'False', so that rows read the same on SQLite and PostgreSQL. Stored dates are epoch
-- milliseconds (src/db/client.ts); text is accepted too, for rows written by hand.

-- CreateView
CREATE VIEW "siteserver_Site" AS
SELECT
    s."id" AS "id",
    s."siteName" AS "siteName",
    s."siteDir" AS "siteDir",
    s."tableName" AS "tableName",
    CASE WHEN s."isRoot" THEN 'True' ELSE 'False' END AS "isRoot",
    s."parentId" AS "parentId",
    s."taxis" AS "taxis",
    COALESCE((
        SELECT group_concat(pair, '&')
        FROM (
            SELECT
                replace(replace(replace(a."key", '%', '%25'), '&', '%26'), '=', '%3D') || '=' ||
                replace(replace(replace(
                    CASE a."type" WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN '' ELSE CAST(a."value" AS TEXT) END,
                    '%', '%25'), '&', '%26'), '=', '%3D') AS pair
            FROM json_each(s."attributes") AS a
            ORDER BY a."key"
        )
    ), '') AS "settingsXml"
FROM "Site" AS s;

-- CreateView
CREATE VIEW "siteserver_Channel" AS
SELECT
    c."id" AS "id",
    c."channelName" AS "channelName",
    c."siteId" AS "siteId",
    c."contentModelPluginId" AS "contentModelPluginId",
    c."contentRelatedPluginIds" AS "contentRelatedPluginIds",
    c."parentId" AS "parentId",
    c."parentsPath" AS "parentsPath",
    c."parentsCount" AS "parentsCount",
    c."childrenCount" AS "childrenCount",
    COALESCE(c."indexName", '') AS "indexName",
    c."groupNames" AS "groupNameCollection",
    c."taxis" AS "taxis",
    CASE WHEN typeof(c."addDate") = 'integer'
        THEN strftime('%Y-%m-%d %H:%M:%S', c."addDate" / 1000, 'unixepoch')
        ELSE strftime('%Y-%m-%d %H:%M:%S', c."addDate") END AS "addDate",
    c."imageUrl" AS "imageUrl",
    c."content" AS "content",
    c."filePath" AS "filePath",
    c."channelFilePathRule" AS "channelFilePathRule",
    c."contentFilePathRule" AS "contentFilePathRule",
    c."linkUrl" AS "linkUrl",
    c."linkType" AS "linkType",
    c."channelTemplateId" AS "channelTemplateId",
    c."contentTemplateId" AS "contentTemplateId",
    c."keywords" AS "keywords",
    c."description" AS "description"
FROM "Channel" AS c;

-- CreateView
CREATE VIEW "siteserver_Content" AS
SELECT
    t."id" AS "id",
    t."channelId" AS "channelId",
    t."siteId" AS "siteId",
    t."addUserName" AS "addUserName",
    t."lastEditUserName" AS "lastEditUserName",
    CASE WHEN typeof(t."lastEditDate") = 'integer'
        THEN strftime('%Y-%m-%d %H:%M:%S', t."lastEditDate" / 1000, 'unixepoch')
        ELSE strftime('%Y-%m-%d %H:%M:%S', t."lastEditDate") END AS "lastEditDate",
    CASE WHEN typeof(t."addDate") = 'integer'
        THEN strftime('%Y-%m-%d %H:%M:%S', t."addDate" / 1000, 'unixepoch')
        ELSE strftime('%Y-%m-%d %H:%M:%S', t."addDate") END AS "addDate",
    t."taxis" AS "taxis",
    t."groupNames" AS "groupNameCollection",
    t."tagNames" AS "tags",
    t."sourceId" AS "sourceId",
    t."referenceId" AS "referenceId",
    t."checkedLevel" AS "checkedLevel",
    t."hits" AS "hits",
    'True' AS "isChecked",
    CASE WHEN t."top" THEN 'True' ELSE 'False' END AS "isTop",
    CASE WHEN t."recommend" THEN 'True' ELSE 'False' END AS "isRecommend",
    CASE WHEN t."hot" THEN 'True' ELSE 'False' END AS "isHot",
    CASE WHEN t."color" THEN 'True' ELSE 'False' END AS "isColor",
    t."title" AS "title",
    t."subTitle" AS "subTitle",
    t."imageUrl" AS "imageUrl",
    t."videoUrl" AS "videoUrl",
    t."fileUrl" AS "fileUrl",
    COALESCE(t."linkUrl", '') AS "linkUrl",
    t."body" AS "content",
    t."summary" AS "summary",
    t."author" AS "author",
    t."source" AS "source"
FROM "Content" AS t
WHERE t."checked" AND NOT t."recycled";
