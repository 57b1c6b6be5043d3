/*
 * Legitimate stl/sqlContents queries over the stl fixture (test/stl/fixture.ts), each with the rows
 * it must return — the same on SQLite and PostgreSQL. Approved contents outside the recycle bin:
 * 101 102 104 105 106 108 110 (site 1) and 109 (site 2); hits 10 30 20 5 50 1 0 and 2.
 */

type Row = Record<string, string | number | null>;

export const LEGIT_QUERIES: { name: string; sql: string; rows: Row[] }[] = [
  {
    name: 'sites by taxis',
    sql: 'SELECT id, siteName FROM siteserver_Site ORDER BY taxis, id',
    rows: [
      { id: 3, siteName: 'Archive' },
      { id: 1, siteName: 'Main site' },
      { id: 2, siteName: 'English news' },
    ],
  },
  {
    name: 'the root site by its boolean word',
    sql: "SELECT siteDir FROM siteserver_Site WHERE isRoot = 'True'",
    rows: [{ siteDir: 'main' }],
  },
  {
    name: "the site's settings as key=value pairs",
    sql: 'SELECT settingsXml FROM siteserver_Site WHERE id = 1',
    rows: [
      {
        settingsXml:
          'configUploadImageIsTitleImage=false&configUploadImageTitleImageWidth=640&' +
          'createStaticContentAddDate=2024-05-01 10:00:00&fileUploadTypeCollection=zip,pdf&' +
          'imageUploadTypeCollection=jpg|png&isWaterMark=true&pageSize=12',
      },
    ],
  },
  {
    name: 'names in any case; keys come back camelCase',
    sql: 'select SITENAME, sitedir from SITESERVER_SITE where ID = 3',
    rows: [{ siteName: 'Archive', siteDir: 'archive' }],
  },
  {
    name: 'count of approved contents',
    sql: 'SELECT count(*) AS total FROM siteserver_Content',
    rows: [{ total: 8 }],
  },
  {
    name: 'group by with sum',
    sql: 'SELECT siteId, count(*) AS n, sum(hits) AS hits FROM siteserver_Content GROUP BY siteId ORDER BY siteId',
    rows: [
      { siteId: 1, n: 7, hits: 116 },
      { siteId: 2, n: 1, hits: 2 },
    ],
  },
  {
    name: 'min, max and a rounded average',
    sql: 'SELECT min(hits) AS low, max(hits) AS high, round(avg(hits), 2) AS mean FROM siteserver_Content WHERE siteId = 1',
    rows: [{ low: 0, high: 50, mean: 16.57 }],
  },
  {
    name: 'having',
    sql: 'SELECT channelId, count(*) AS n FROM siteserver_Content GROUP BY channelId HAVING count(*) > 1 ORDER BY channelId',
    rows: [{ channelId: 11, n: 3 }],
  },
  {
    name: 'flag words',
    sql: "SELECT id FROM siteserver_Content WHERE isTop = 'True' ORDER BY id",
    rows: [{ id: 101 }, { id: 106 }],
  },
  {
    name: 'order by and limit',
    sql: 'SELECT id, title FROM siteserver_Content ORDER BY hits DESC LIMIT 3',
    rows: [
      { id: 106, title: 'Content 106' },
      { id: 102, title: 'Content 102' },
      { id: 104, title: 'Content 104' },
    ],
  },
  {
    name: 'limit with offset',
    sql: 'SELECT id FROM siteserver_Content ORDER BY hits DESC LIMIT 2 OFFSET 2',
    rows: [{ id: 104 }, { id: 101 }],
  },
  {
    name: 'join of contents and channels',
    sql:
      'SELECT c.id, ch.channelName FROM siteserver_Content c JOIN siteserver_Channel ch ON ch.id = c.channelId ' +
      'WHERE c.siteId = 1 ORDER BY c.id',
    rows: [
      { id: 101, channelName: 'News' },
      { id: 102, channelName: 'News' },
      { id: 104, channelName: 'Tech' },
      { id: 105, channelName: 'Deep' },
      { id: 106, channelName: 'Products' },
      { id: 108, channelName: 'Main site' },
      { id: 110, channelName: 'News' },
    ],
  },
  {
    name: 'join of the three views',
    sql:
      'SELECT s.siteDir, ch.channelName, c.title FROM siteserver_Content AS c ' +
      'INNER JOIN siteserver_Channel AS ch ON ch.id = c.channelId ' +
      'INNER JOIN siteserver_Site AS s ON s.id = ch.siteId WHERE c.id = 109',
    rows: [{ siteDir: 'en/News', channelName: 'News', title: 'Content 109' }],
  },
  {
    name: 'left join with counts',
    sql:
      'SELECT s.id, count(ch.id) AS channels FROM siteserver_Site s LEFT JOIN siteserver_Channel ch ' +
      'ON ch.siteId = s.id GROUP BY s.id ORDER BY s.id',
    rows: [
      { id: 1, channels: 6 },
      { id: 2, channels: 2 },
      { id: 3, channels: 1 },
    ],
  },
  {
    name: 'sub-select in IN',
    sql: 'SELECT id FROM siteserver_Content WHERE channelId IN (SELECT id FROM siteserver_Channel WHERE parentId = 11) ORDER BY id',
    rows: [{ id: 104 }],
  },
  {
    name: 'exists',
    sql: 'SELECT id FROM siteserver_Site s WHERE EXISTS (SELECT 1 FROM siteserver_Content c WHERE c.siteId = s.id) ORDER BY id',
    rows: [{ id: 1 }, { id: 2 }],
  },
  {
    name: 'correlated scalar sub-select',
    sql:
      'SELECT id, (SELECT channelName FROM siteserver_Channel ch WHERE ch.id = c.channelId) AS channel ' +
      'FROM siteserver_Content c WHERE id IN (105, 106) ORDER BY id',
    rows: [
      { id: 105, channel: 'Deep' },
      { id: 106, channel: 'Products' },
    ],
  },
  {
    name: 'sub-select in FROM',
    sql: 'SELECT count(*) AS n FROM (SELECT channelId FROM siteserver_Content GROUP BY channelId) AS used',
    rows: [{ n: 6 }],
  },
  {
    name: 'a read-only CTE',
    sql: 'WITH popular AS (SELECT id, hits FROM siteserver_Content WHERE hits >= 20) SELECT count(*) AS n, sum(hits) AS hits FROM popular',
    rows: [{ n: 3, hits: 100 }],
  },
  {
    name: 'union of two views',
    sql: 'SELECT id FROM siteserver_Site WHERE id = 1 UNION SELECT id FROM siteserver_Channel WHERE id = 11 ORDER BY id',
    rows: [{ id: 1 }, { id: 11 }],
  },
  {
    name: 'like',
    sql: "SELECT id FROM siteserver_Content WHERE groupNameCollection LIKE '%b%' ORDER BY id",
    rows: [{ id: 102 }, { id: 104 }],
  },
  {
    name: 'string functions',
    sql: "SELECT upper(siteDir) AS dir, length(siteName) AS len, replace(siteName, 'news', 'items') AS renamed FROM siteserver_Site WHERE id = 2",
    rows: [{ dir: 'EN/NEWS', len: 12, renamed: 'English items' }],
  },
  {
    name: 'case expression',
    sql: "SELECT id, CASE WHEN hits > 25 THEN 'many' ELSE 'few' END AS popularity FROM siteserver_Content WHERE id IN (101, 102) ORDER BY id",
    rows: [
      { id: 101, popularity: 'few' },
      { id: 102, popularity: 'many' },
    ],
  },
  {
    name: 'dates compare as text',
    sql: "SELECT id FROM siteserver_Content WHERE addDate >= '2024-02-15' AND addDate < '2024-04-15' ORDER BY id",
    rows: [{ id: 102 }, { id: 105 }],
  },
  {
    name: 'channel tree by parentsPath',
    sql: "SELECT channelName FROM siteserver_Channel WHERE parentsPath = '1,11'",
    rows: [{ channelName: 'Tech' }],
  },
  {
    name: 'distinct',
    sql: "SELECT DISTINCT channelName FROM siteserver_Channel WHERE siteId = 1 AND channelName = 'News'",
    rows: [{ channelName: 'News' }],
  },
  {
    name: 'non-ASCII text inside a string literal',
    sql: "SELECT count(*) AS n FROM siteserver_Content WHERE title = '新闻'",
    rows: [{ n: 0 }],
  },
  {
    name: 'coalesce, nullif and abs',
    sql: "SELECT coalesce(nullif(indexName, ''), 'none') AS idx, abs(taxis - 5) AS distance FROM siteserver_Channel WHERE id IN (13, 14) ORDER BY id",
    rows: [
      { idx: 'none', distance: 4 },
      { idx: 'products', distance: 3 },
    ],
  },
  {
    name: 'a final semicolon',
    sql: 'SELECT id FROM siteserver_Site WHERE id = 2;',
    rows: [{ id: 2 }],
  },
  {
    name: 'LIKE with an ESCAPE character',
    sql: "SELECT count(*) AS n FROM siteserver_Site WHERE siteName LIKE '%!%%' ESCAPE '!' OR siteDir LIKE 'ma_n'",
    rows: [{ n: 1 }],
  },
  {
    name: 'a UNION ordered by an alias of its first SELECT',
    sql: 'SELECT id AS k FROM siteserver_Site WHERE id < 3 UNION SELECT id FROM siteserver_Site WHERE id = 3 ORDER BY k DESC',
    rows: [{ k: 3 }, { k: 2 }, { k: 1 }],
  },
];
