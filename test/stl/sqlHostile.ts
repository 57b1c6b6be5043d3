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
}

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

const group = (reason: RegExp, queries: string[]): HostileQuery[] => queries.map((sql) => ({ sql, reason }));

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
  // Very long input
  { sql: `SELECT id AS ${'a'.repeat(10_000)} FROM siteserver_Site`, reason: /queryString/ },
];
