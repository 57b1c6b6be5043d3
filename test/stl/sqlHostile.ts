/*
 * Hostile stl/sqlContents queries: each must be refused with a 400 that names the reason, and
 * leave every table and the schema as they were (test/stl/sqlHostile.test.ts), on SQLite and on
 * PostgreSQL. `reason` is a pattern the problem's detail must match; `params` are extra query
 * parameters. Paths under HOSTILE_DIR must not exist afterwards (ATTACH, VACUUM INTO, COPY).
 */

export const HOSTILE_DIR = '/tmp/cms-sql-hostile';

export interface HostileQuery {
  sql: string;
  reason: RegExp;
  params?: Record<string, string>;
  /** Hostile on this database only (names resolve differently on the other one). */
  only?: 'sqlite' | 'postgresql';
}

/** The answer size cap the corpus runs with (the test app's STL_SQL_MAX_BYTES). */
export const HOSTILE_MAX_BYTES = 4096;

const NOT_SELECT =
  /is not a SELECT statement|cannot be read as a|contains a .* statement|has more than one statement/;
const STACKED = /has more than one statement|has a comment|cannot be read as a/;
const COMMENT = /has a comment/;
const PRIVATE = /which is not a public view|another schema or database/;
const FUNCTION = /which is not on the function allow-list|calls a function by a qualified/;
const QUOTED = /has a quoted identifier/;
const NON_ASCII = /outside printable ASCII/;
const PARAMETER = /has a '.'|has a parameter or variable|cannot be read as a/;
const TABLE_FUNCTION =
  /table functions are refused|which is not a public view|which is not on the function allow-list|cannot be read as a/;

const RESOLUTION =
  /which is not a column of|which reveals the session|is not a relation it reads|which is not a column of the relations it reads|which is not on the function allow-list|cannot be read as a/;
const OPERATOR = /which is not on the operator allow-list|cannot be read as a/;
const CAST = /which is not an allowed type|cannot be read as a/;
const CLAUSE =
  /uses COLLATE|does not allow|uses LATERAL|something other than a view|has a quoted identifier|cannot be read as a/;
const WIDTH = /which is not on the function allow-list|calls replace\(\) with other than/;
const SIZE = new RegExp(`answers more than ${HOSTILE_MAX_BYTES} bytes and was stopped`);

const group = (reason: RegExp, queries: string[], only?: 'sqlite' | 'postgresql'): HostileQuery[] =>
  queries.map((sql) => (only === undefined ? { sql, reason } : { sql, reason, only }));

export const HOSTILE_QUERIES: HostileQuery[] = [
  // Anything but a single SELECT
  ...group(NOT_SELECT, [
    'DELETE FROM siteserver_Content',
    "UPDATE siteserver_Site SET siteName = 'pwned'",
    'INSERT INTO siteserver_Site (id) VALUES (99)',
    'REPLACE INTO Site (id, siteDir, siteName) VALUES (1, 1, 1)',
    'DROP TABLE User',
    'DROP VIEW siteserver_Site',
    'CREATE TABLE stolen (a int)',
    'ALTER TABLE Site ADD COLUMN x int',
    'TRUNCATE Site',
    'TRUNCATE TABLE ApiKey',
    'EXPLAIN SELECT * FROM siteserver_Site',
    'PRAGMA table_info(User)',
    'PRAGMA writable_schema = 1',
    'PRAGMA query_only = 0',
    `ATTACH DATABASE '${HOSTILE_DIR}-attach.db' AS evil`,
    `VACUUM INTO '${HOSTILE_DIR}-vacuum.db'`,
    'VACUUM',
    `COPY Site TO '${HOSTILE_DIR}-copy.csv'`,
    'COPY (SELECT * FROM siteserver_Site) TO STDOUT',
    'SET ROLE postgres',
    'RESET ROLE',
    'SET statement_timeout = 0',
    'GRANT SELECT ON User TO PUBLIC',
    'CREATE TEMP VIEW v AS SELECT * FROM User',
    'BEGIN',
    'COMMIT',
    'CALL evil()',
    'LISTEN evil',
    'PREPARE p AS SELECT 1',
    'DECLARE c CURSOR FOR SELECT * FROM User',
    'ANALYZE',
    'REINDEX Site',
  ]),
  // Stacked statements and comments hiding a second statement
  ...group(STACKED, [
    'SELECT 1; DROP TABLE User',
    'SELECT id FROM siteserver_Site;DELETE FROM Site;',
    'SELECT 1; SELECT 2',
    'SELECT 1 /* x */; DELETE FROM Site',
    'SELECT 1 --\n; DELETE FROM Site',
    `SELECT 1; ATTACH '${HOSTILE_DIR}-stacked.db' AS x`,
    "SELECT 1; VACUUM INTO '/tmp/cms-sql-hostile-stacked-vacuum.db'",
    'BEGIN; DELETE FROM Site; COMMIT',
  ]),
  ...group(COMMENT, [
    'SELECT id FROM siteserver_Site /* ; DELETE FROM Site */',
    'SELECT id FROM siteserver_Site -- ; DELETE FROM Site',
    'SELECT id FROM siteserver_Site # ; DELETE FROM Site',
    'SELECT/**/id/**/FROM/**/User',
  ]),
  // Data-modifying and sneaky clauses
  ...group(/cannot be read as a|contains a .* statement|has SELECT \.\.\. INTO|locking clause|not a SELECT/, [
    'WITH d AS (DELETE FROM Site RETURNING *) SELECT * FROM d',
    "WITH u AS (UPDATE Site SET siteName = 'x' RETURNING id) SELECT id FROM u",
    "WITH i AS (INSERT INTO Site (siteDir, siteName) VALUES ('x', 'x') RETURNING id) SELECT * FROM i",
    'SELECT * INTO stolen FROM siteserver_Site',
    'SELECT * INTO TEMP stolen FROM siteserver_Site',
    'SELECT * FROM siteserver_Site FOR UPDATE',
    'SELECT * FROM siteserver_Site FOR SHARE',
  ]),
  // Private tables, directly or through UNION, joins, sub-selects, CTEs and qualifiers
  ...group(PRIVATE, [
    'SELECT * FROM User',
    'SELECT * FROM Administrator',
    'SELECT * FROM ApiKey',
    'SELECT * FROM SystemSetting',
    'SELECT * FROM SharedCounter',
    'SELECT * FROM SharedMark',
    'SELECT * FROM Content',
    'SELECT * FROM Site',
    'SELECT * FROM Channel',
    'SELECT * FROM _prisma_migrations',
    'SELECT id FROM siteserver_Site UNION SELECT id FROM User',
    'SELECT siteName FROM siteserver_Site UNION ALL SELECT passwordHash FROM User',
    'SELECT id FROM siteserver_Site UNION SELECT id FROM ApiKey ORDER BY id',
    'SELECT * FROM siteserver_Site WHERE id IN (SELECT id FROM Administrator)',
    'SELECT (SELECT passwordHash FROM User LIMIT 1) AS h FROM siteserver_Site',
    'SELECT * FROM siteserver_Site s JOIN User u ON u.id = s.id',
    'SELECT * FROM siteserver_Site s LEFT JOIN ApiKey k ON k.id = s.id',
    'SELECT * FROM siteserver_Site WHERE EXISTS (SELECT 1 FROM ApiKey)',
    'WITH x AS (SELECT * FROM User) SELECT * FROM x',
    'SELECT * FROM (SELECT * FROM User) AS x',
    'SELECT * FROM (WITH User AS (SELECT 1 AS id) SELECT id FROM User) AS a, User',
    'SELECT * FROM main.User',
    'SELECT * FROM public.User',
    'SELECT * FROM main.siteserver_Site',
    'SELECT * FROM temp.sqlite_master',
    // catalog and schema tables
    'SELECT * FROM sqlite_schema',
    'SELECT * FROM sqlite_master',
    'SELECT * FROM SQLITE_MASTER',
    'SELECT * FROM sqlite_temp_master',
    "SELECT name FROM sqlite_schema WHERE type = 'table'",
    'SELECT * FROM sqlite_sequence',
    'SELECT * FROM pg_catalog.pg_tables',
    'SELECT * FROM pg_tables',
    'SELECT * FROM pg_user',
    'SELECT * FROM pg_shadow',
    'SELECT * FROM pg_authid',
    'SELECT * FROM pg_settings',
    'SELECT * FROM information_schema.tables',
    'SELECT * FROM information_schema.columns',
    'SELECT id FROM siteserver_Site UNION SELECT oid FROM pg_catalog.pg_class',
  ]),
  // Functions that read files, settings or the catalog, sleep, load code or make huge values
  ...group(FUNCTION, [
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT pg_read_binary_file('/etc/passwd')",
    "SELECT lo_import('/etc/passwd')",
    "SELECT lo_export(1, '/tmp/cms-sql-hostile-lo')",
    'SELECT pg_sleep(10)',
    'SELECT id FROM siteserver_Site WHERE pg_sleep(10) IS NULL',
    "SELECT load_extension('/tmp/evil.so')",
    "SELECT dblink('host=evil', 'SELECT 1')",
    "SELECT set_config('role', 'postgres', false)",
    "SELECT current_setting('data_directory')",
    "SELECT pg_ls_dir('.')",
    "SELECT pg_stat_file('/etc/passwd')",
    'SELECT version()',
    'SELECT sqlite_version()',
    'SELECT randomblob(1000000000)',
    'SELECT zeroblob(1000000000)',
    "SELECT readfile('/etc/passwd')",
    "SELECT writefile('/tmp/cms-sql-hostile-file', 'x')",
    'SELECT pg_catalog.upper(siteName) FROM siteserver_Site',
    'SELECT pg_terminate_backend(1)',
    'SELECT txid_current()',
    "SELECT nextval('x')",
    "SELECT query_to_xml('select * from pg_user', true, true, '')",
    "SELECT repeat('x', 1000000000)",
    'SELECT inet_server_addr()',
  ]),
  ...group(TABLE_FUNCTION, [
    'SELECT * FROM generate_series(1, 100000000)',
    "SELECT * FROM json_each('{}')",
    "SELECT * FROM pragma_table_info('User')",
    'SELECT * FROM pragma_database_list',
  ]),
  ...group(/which is not an allowed type|cannot be read as a/, [
    "SELECT CAST('pg_authid' AS regclass)",
    "SELECT 'pg_authid'::regclass",
  ]),
  // Quoted identifiers and case tricks
  ...group(QUOTED, [
    'SELECT * FROM "User"',
    'SELECT * FROM "user"',
    'SELECT * FROM [User]',
    'SELECT * FROM `User`',
    'SELECT * FROM "siteserver_Site" UNION SELECT * FROM "ApiKey"',
    'SELECT "passwordHash" FROM siteserver_Site',
  ]),
  ...group(PRIVATE, ['SELECT * FROM uSeR', 'SELECT * FROM APIKEY', 'SELECT\n*\nFROM\nUser']),
  ...group(/Unicode escape string|has a quoted identifier/, [
    'SELECT * FROM U&"\\0055ser"',
    "SELECT U&'\\0041'",
  ]),
  ...group(/escape string/, [
    "SELECT id FROM siteserver_Site WHERE siteName = E'\\''; DELETE FROM Site; --'",
  ]),
  // Unicode look-alikes and invisible characters
  ...group(NON_ASCII, [
    'SELECT * FROM \u0455iteserver_Site',
    'SELECT 1\uFF1B DELETE FROM Site',
    '\uFF33\uFF25\uFF2C\uFF25\uFF23\uFF34 * FROM siteserver_Site',
    'SELECT * FROM siteserver\u200B_Site',
    'SELECT\u00A0* FROM User',
    'SELECT * FROM \u0405ITESERVER_SITE',
    'SELECT * FROM U\u0455er',
  ]),
  // Parameters, variables, dollar quoting, backslashes, broken literals
  ...group(PARAMETER, [
    'SELECT * FROM siteserver_Site WHERE id = ?',
    'SELECT * FROM siteserver_Site WHERE id = $1',
    'SELECT * FROM siteserver_Site WHERE id = :id',
    'SELECT @@version',
    'SELECT $$x$$',
    'SELECT id FROM siteserver_Site\\; DELETE FROM Site',
  ]),
  ...group(/string literal that is not closed/, ["SELECT * FROM siteserver_Site WHERE siteName = 'open"]),
  // A second database, however it is asked for
  {
    sql: 'SELECT id FROM siteserver_Site',
    params: { connectionString: 'Server=evil;Database=master;User Id=sa' },
    reason: /connectionString/,
  },
  { sql: 'SELECT id FROM siteserver_Site', params: { databaseType: 'SqlServer' }, reason: /databaseType/ },
  // CTE names in PostgreSQL's scope: a name defined later in the same WITH (without RECURSIVE), or
  // the CTE's own name in its body, is the real relation there (on SQLite it is the CTE).
  ...group(
    PRIVATE,
    [
      "WITH a AS (SELECT usename FROM pg_user), pg_user AS (SELECT 'x' AS usename) SELECT * FROM a",
      "WITH a AS (SELECT datname FROM pg_database), pg_database AS (SELECT 'x' AS datname) SELECT * FROM a",
      "WITH a AS (SELECT name, setting FROM pg_settings), pg_settings AS (SELECT 'x' AS name, 'y' AS setting) SELECT * FROM a",
      "WITH a AS (SELECT prosrc FROM pg_proc), pg_proc AS (SELECT 'x' AS prosrc) SELECT * FROM a",
      "WITH a AS (SELECT definition FROM pg_views), pg_views AS (SELECT 'x' AS definition) SELECT * FROM a",
      "WITH a AS (SELECT rolname FROM pg_roles), b AS (SELECT * FROM a), pg_roles AS (SELECT 'x' AS rolname) SELECT * FROM b",
      'WITH pg_user AS (SELECT * FROM pg_user) SELECT * FROM pg_user',
      "SELECT * FROM (WITH a AS (SELECT passwd FROM pg_shadow), pg_shadow AS (SELECT 'x' AS passwd) SELECT * FROM a) AS x",
      "SELECT * FROM siteserver_Site WHERE siteName IN (WITH a AS (SELECT usename FROM pg_user), pg_user AS (SELECT 'x' AS usename) SELECT usename FROM a)",
    ],
    'postgresql',
  ),
  // Scopes both databases share: a nested WITH does not reach out, a qualifier is not a CTE.
  ...group(PRIVATE, [
    'SELECT (SELECT count(*) FROM (WITH User AS (SELECT 1 AS x) SELECT x FROM User) AS t) AS n, (SELECT count(*) FROM User) AS m',
    'WITH a AS (SELECT 1 AS x) SELECT * FROM a WHERE EXISTS (SELECT 1 FROM Administrator)',
    'WITH a AS (SELECT 1 AS x) SELECT * FROM main.a',
    'WITH a AS (SELECT 1 AS x) SELECT * FROM public.a',
    'WITH a AS (SELECT 1 AS x) SELECT * FROM a, (WITH b AS (SELECT 2 AS y) SELECT * FROM ApiKey) AS c',
    'SELECT * FROM temp.siteserver_Site',
  ]),
  // Functions reached without call syntax: attribute notation, session keywords.
  ...group(RESOLUTION, [
    'SELECT s.to_json AS j FROM siteserver_Site s',
    'SELECT s.pg_column_size AS n FROM siteserver_Site s',
    'SELECT c.row_to_json AS j FROM siteserver_Content c',
    'SELECT s.id FROM siteserver_Site s WHERE s.to_jsonb IS NOT NULL',
    "SELECT x.current_setting AS v FROM (SELECT 'role' AS y) AS x",
    'SELECT siteserver_Site.to_json AS j FROM siteserver_Site',
    'SELECT t.text AS v FROM (SELECT id FROM siteserver_Site) AS t',
    'SELECT user',
    'SELECT user AS u',
    'SELECT current_user',
    'SELECT session_user',
    'SELECT current_role',
    'SELECT current_catalog',
    'SELECT current_schema',
    'SELECT current_schema()',
    'SELECT system_user',
    "SELECT id FROM siteserver_Site WHERE user = 'postgres'",
    'SELECT id FROM siteserver_Site ORDER BY current_catalog',
    'SELECT localtimestamp',
    "SELECT current_setting('is_superuser')",
    'SELECT s FROM siteserver_Site s',
    'SELECT nosuchcolumn FROM siteserver_Site',
  ]),
  // Operators, each of which calls a function of its own.
  ...group(OPERATOR, [
    "SELECT '{\"a\":1}' ->> 'a'",
    "SELECT '{\"a\":1}' -> 'a'",
    "SELECT siteName FROM siteserver_Site WHERE siteName ~ 'a'",
    "SELECT siteName FROM siteserver_Site WHERE siteName !~ 'a'",
    'SELECT 1 << 40',
    'SELECT 5 & 3',
    'SELECT 2 ^ 3',
    "SELECT title FROM siteserver_Content WHERE title REGEXP 'a'",
    "SELECT siteName FROM siteserver_Site WHERE siteName GLOB 'a*'",
    "SELECT siteName FROM siteserver_Site WHERE siteName SIMILAR TO 'a%'",
  ]),
  ...group(CAST, [
    'SELECT 1::regproc',
    "SELECT CAST('now' AS regtype)",
    "SELECT 'public'::regnamespace",
    'SELECT CAST(id AS oid) FROM siteserver_Site',
    "SELECT '<a/>'::xml",
    "SELECT CAST('{}' AS json)",
  ]),
  ...group(CLAUSE, [
    'SELECT siteName COLLATE C FROM siteserver_Site',
    'SELECT siteName FROM siteserver_Site ORDER BY siteName COLLATE nocase',
    'SELECT siteName COLLATE "C" FROM siteserver_Site',
    'SELECT * FROM siteserver_Site TABLESAMPLE SYSTEM (50)',
    'SELECT * FROM siteserver_Content TABLESAMPLE BERNOULLI (10)',
    'SELECT * FROM siteserver_Site s, LATERAL (SELECT * FROM siteserver_Content c WHERE c.siteId = s.id) AS k',
    "SELECT overlay(siteName placing 'x' from 1) FROM siteserver_Site",
  ]),
  // Values whose size a number of the query decides, or that grow with the rows read.
  ...group(WIDTH, [
    "SELECT printf('%.*c', 1000000000, 'x')",
    "SELECT printf('%1000000000d', 1)",
    "SELECT format('%1000000000s', 'x')",
    "SELECT lpad('x', 1000000000)",
    "SELECT rpad('x', 1000000000, 'y')",
    "SELECT upper(printf('%.*c', 100000000, 'x')) AS v",
    'SELECT hex(zeroblob(100000000))',
    'SELECT replace(content, content, content || content) FROM siteserver_Content',
    "SELECT replace(siteName, 'a', siteName) FROM siteserver_Site",
    "SELECT replace(replace('a', 'a', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), 'a', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')",
    "SELECT string_agg(a.content, ',') FROM siteserver_Content a, siteserver_Content b, siteserver_Content c",
    'SELECT group_concat(a.content) FROM siteserver_Content a, siteserver_Content b, siteserver_Content c',
    'SELECT array_agg(a.content) FROM siteserver_Content a, siteserver_Content b',
  ]),
  // Answers past the size cap, however legitimate each part: stopped while the rows are read.
  ...group(SIZE, [
    'SELECT a.settingsXml AS a, b.settingsXml AS b, c.settingsXml AS c FROM siteserver_Site a, siteserver_Site b, siteserver_Site c, siteserver_Site d',
    'SELECT a.title || b.title || c.title AS t FROM siteserver_Content a, siteserver_Content b, siteserver_Content c',
    'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 900) SELECT x, siteName || siteName || siteName AS s FROM n, siteserver_Site',
    'SELECT a.title, b.subTitle, c.title FROM siteserver_Content a, siteserver_Content b, siteserver_Content c',
    // A column named like the sandbox's own alias for the query must not change what is measured.
    'SELECT 1 AS cms_sandbox_query, a.settingsXml AS a, b.settingsXml AS b, c.settingsXml AS c FROM siteserver_Site a, siteserver_Site b, siteserver_Site c, siteserver_Site d',
  ]),
  // Very long input
  { sql: `SELECT id AS ${'a'.repeat(10_000)} FROM siteserver_Site`, reason: /queryString/ },
];
