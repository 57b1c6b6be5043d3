-- Public views of stl/sqlContents (README, "SQL sandbox"): the only relations the sandbox may read,
-- shaped like the original system's tables. Names are unquoted (lower case) so that SQL written for
-- the original, which ignores case, keeps working; the service maps the keys back to camelCase.
-- Dates are UTC text 'YYYY-MM-DD HH24:MI:SS' and booleans the words 'True'/'False', so that rows read
-- the same on SQLite and PostgreSQL. Stored timestamps are UTC without a zone.

-- CreateView
CREATE VIEW siteserver_site AS
SELECT
    s."id" AS id,
    s."siteName" AS sitename,
    s."siteDir" AS sitedir,
    s."tableName" AS tablename,
    CASE WHEN s."isRoot" THEN 'True' ELSE 'False' END AS isroot,
    s."parentId" AS parentid,
    s."taxis" AS taxis,
    COALESCE((
        SELECT string_agg(
            replace(replace(replace(a.key, '%', '%25'), '&', '%26'), '=', '%3D') || '=' ||
            replace(replace(replace(COALESCE(a.value, ''), '%', '%25'), '&', '%26'), '=', '%3D'),
            '&' ORDER BY a.key COLLATE "C")
        FROM jsonb_each_text(s."attributes"::jsonb) AS a
    ), '') AS settingsxml
FROM "Site" AS s;

-- CreateView
CREATE VIEW siteserver_channel AS
SELECT
    c."id" AS id,
    c."channelName" AS channelname,
    c."siteId" AS siteid,
    c."contentModelPluginId" AS contentmodelpluginid,
    c."contentRelatedPluginIds" AS contentrelatedpluginids,
    c."parentId" AS parentid,
    c."parentsPath" AS parentspath,
    c."parentsCount" AS parentscount,
    c."childrenCount" AS childrencount,
    COALESCE(c."indexName", '') AS indexname,
    c."groupNames" AS groupnamecollection,
    c."taxis" AS taxis,
    to_char(c."addDate", 'YYYY-MM-DD HH24:MI:SS') AS adddate,
    c."imageUrl" AS imageurl,
    c."content" AS content,
    c."filePath" AS filepath,
    c."channelFilePathRule" AS channelfilepathrule,
    c."contentFilePathRule" AS contentfilepathrule,
    c."linkUrl" AS linkurl,
    c."linkType" AS linktype,
    c."channelTemplateId" AS channeltemplateid,
    c."contentTemplateId" AS contenttemplateid,
    c."keywords" AS keywords,
    c."description" AS description
FROM "Channel" AS c;

-- CreateView
CREATE VIEW siteserver_content AS
SELECT
    t."id" AS id,
    t."channelId" AS channelid,
    t."siteId" AS siteid,
    t."addUserName" AS addusername,
    t."lastEditUserName" AS lasteditusername,
    to_char(t."lastEditDate", 'YYYY-MM-DD HH24:MI:SS') AS lasteditdate,
    to_char(t."addDate", 'YYYY-MM-DD HH24:MI:SS') AS adddate,
    t."taxis" AS taxis,
    t."groupNames" AS groupnamecollection,
    t."tagNames" AS tags,
    t."sourceId" AS sourceid,
    t."referenceId" AS referenceid,
    t."checkedLevel" AS checkedlevel,
    t."hits" AS hits,
    'True' AS ischecked,
    CASE WHEN t."top" THEN 'True' ELSE 'False' END AS istop,
    CASE WHEN t."recommend" THEN 'True' ELSE 'False' END AS isrecommend,
    CASE WHEN t."hot" THEN 'True' ELSE 'False' END AS ishot,
    CASE WHEN t."color" THEN 'True' ELSE 'False' END AS iscolor,
    t."title" AS title,
    t."subTitle" AS subtitle,
    t."imageUrl" AS imageurl,
    t."videoUrl" AS videourl,
    t."fileUrl" AS fileurl,
    COALESCE(t."linkUrl", '') AS linkurl,
    t."body" AS content,
    t."summary" AS summary,
    t."author" AS author,
    t."source" AS source
FROM "Content" AS t
WHERE t."checked" AND NOT t."recycled";

-- The sandbox's role (docs/security/sql-sandbox.md, "Roles"): it cannot log in and may read the three
-- views only, nothing else; the views read the tables with their owner's rights. The service switches
-- to it with SET LOCAL ROLE inside a read-only transaction. Roles belong to the whole server and making
-- one needs more than an ordinary role's rights, so it is the operator's step (`cms sandbox-role`,
-- which grants what follows itself when it comes later): a superuser running this makes the role and
-- the membership; an ordinary role uses them when they exist and otherwise goes on without them (the
-- sandbox answers 503 until the step is taken). This block was amended after release to tolerate an
-- ordinary role; history.ts accepts the former script's checksum.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cms_stl_reader') THEN
        BEGIN
            CREATE ROLE cms_stl_reader NOLOGIN;
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN NULL;
            WHEN insufficient_privilege THEN RETURN;
        END;
    END IF;
    IF NOT pg_has_role(current_user, 'cms_stl_reader', 'MEMBER') THEN
        BEGIN
            GRANT cms_stl_reader TO CURRENT_USER;
        EXCEPTION WHEN insufficient_privilege THEN NULL;
        END;
    END IF;
    REVOKE ALL ON ALL TABLES IN SCHEMA public FROM cms_stl_reader;
    GRANT USAGE ON SCHEMA public TO cms_stl_reader;
    GRANT SELECT ON siteserver_site, siteserver_channel, siteserver_content TO cms_stl_reader;
END
$$;
