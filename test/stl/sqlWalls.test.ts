import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { openSandbox, type Sandbox } from '../../src/db/sandbox/index.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { runSqlContents, type SandboxLimits, type SandboxWalls } from '../../src/domain/stl/sql/sandbox.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/database.ts';
import { loadStlFixture } from './fixture.ts';

/*
 * Each wall of the sandbox alone, the other two switched off: it refuses what the others would let
 * through. Every case first shows the query getting through with all three walls off, so that the
 * refusal is that wall's own doing. On the database the run selects (SQLite or PostgreSQL).
 */

let database: TestDatabase;
let executor: Sandbox;

beforeAll(async () => {
  database = await createTestDatabase();
  await loadStlFixture(database.handle, new Date());
  await database.handle.db.apiKey.create({
    data: { title: 'secret', digest: 'not-a-real-digest', scopes: 'STL' },
  });
  executor = openSandbox(database.url);
});
afterAll(async () => {
  await executor.close();
  await database.drop();
});

const limits: SandboxLimits = { maxRows: 10, maxBytes: 2000, timeoutMs: 500, maxLength: 10_000 };
const NONE: SandboxWalls = { parser: false, database: false, limits: false };
const only = (wall: keyof SandboxWalls): SandboxWalls => ({ ...NONE, [wall]: true });

const run = (sql: string, walls: SandboxWalls) => runSqlContents(executor, sql, limits, 'test', walls);

async function refusal(sql: string, walls: SandboxWalls): Promise<string> {
  try {
    await run(sql, walls);
  } catch (error) {
    if (error instanceof DomainError) {
      expect(error.code).toBe('validation');
      expect(error.fields.map((field) => field.field)).toEqual(['queryString']);
      return error.message;
    }
    throw error;
  }
  throw new Error(`not refused: ${sql}`);
}

describe('the parser wall alone', () => {
  // Relations every role of the database may read (and, on SQLite, tables named without quotes).
  const sqlite: [string, string][] = [
    ['SELECT * FROM ApiKey', "reads 'ApiKey', which is not a public view"],
    [
      'SELECT id FROM siteserver_Site UNION SELECT id FROM ApiKey',
      "reads 'ApiKey', which is not a public view",
    ],
    ['SELECT upper(title) AS t FROM ApiKey', "reads 'ApiKey', which is not a public view"],
  ];
  const postgres: [string, string][] = [
    ['SELECT usename FROM pg_user', "reads 'pg_user', which is not a public view"],
    ['SELECT name, setting FROM pg_settings', "reads 'pg_settings', which is not a public view"],
    [
      'SELECT table_name FROM information_schema.tables',
      'names a relation in another schema or database (information_schema.tables)',
    ],
  ];
  test.each(testServerUrl() === undefined ? sqlite : postgres)('%s', async (sql, reason) => {
    expect((await run(sql, NONE)).length).toBeGreaterThan(0);
    expect(await refusal(sql, only('parser'))).toBe(`queryString ${reason}`);
  });

  // Names as each database resolves them, functions reached without call syntax, huge values.
  const sqliteResolution: [string, string][] = [
    [
      'SELECT id FROM (WITH ApiKey AS (SELECT 1 AS id) SELECT id FROM ApiKey) AS a UNION SELECT id FROM ApiKey',
      "reads 'ApiKey', which is not a public view",
    ],
    ["SELECT '{\"a\":1}' ->> 'a' AS v", 'uses the operator ->>, which is not on the operator allow-list'],
    ["SELECT printf('%.*c', 100000, 'x') AS v", 'calls printf(), which is not on the function allow-list'],
    ["SELECT replace(siteName, 'a', siteName) AS v FROM siteserver_Site", 'calls replace() with other than'],
  ];
  const postgresResolution: [string, string][] = [
    [
      "WITH a AS (SELECT usename AS name FROM pg_user), pg_user AS (SELECT 'cte' AS usename) SELECT name FROM a",
      "reads 'pg_user', which is not a public view",
    ],
    [
      "WITH a AS (SELECT datname AS name FROM pg_database), pg_database AS (SELECT 'x' AS datname) SELECT name FROM a",
      "reads 'pg_database', which is not a public view",
    ],
    [
      'SELECT s.to_json AS j FROM siteserver_Site s WHERE s.id = 1',
      "names 's.to_json', which is not a column of 's'",
    ],
    ['SELECT user AS u', 'uses user, which reveals the session (role, database, settings)'],
    [
      'SELECT current_catalog AS c',
      'uses current_catalog, which reveals the session (role, database, settings)',
    ],
    ["SELECT lpad('x', 100000) AS v", 'calls lpad(), which is not on the function allow-list'],
    ["SELECT 'x' ~ 'x' AS v", 'uses the operator ~, which is not on the operator allow-list'],
  ];
  test.each(testServerUrl() === undefined ? sqliteResolution : postgresResolution)(
    '%s',
    async (sql, reason) => {
      expect((await run(sql, NONE)).length).toBeGreaterThan(0);
      expect(await refusal(sql, only('parser'))).toContain(`queryString ${reason}`);
    },
  );

  test('a CTE named later in the same WITH: SQLite reads the CTE, PostgreSQL the real relation', async () => {
    const sql = 'WITH a AS (SELECT n FROM b), b AS (SELECT 7 AS n) SELECT n FROM a';
    if (database.handle.provider === 'sqlite') {
      expect(await run(sql, { parser: true, database: true, limits: true })).toEqual([{ n: 7 }]);
    } else {
      expect(await refusal(sql, only('parser'))).toBe("queryString reads 'b', which is not a public view");
      // With RECURSIVE every CTE of the list is in scope for every body, on PostgreSQL too.
      expect(
        await run(`WITH RECURSIVE ${sql.slice(5)}`, { parser: true, database: true, limits: true }),
      ).toEqual([{ n: 7 }]);
    }
  });

  test('a function off the list (the version of the database)', async () => {
    const name = database.handle.provider === 'sqlite' ? 'sqlite_version' : 'version';
    const sql = `SELECT ${name}() AS v`;
    expect(await run(sql, NONE)).toEqual([{ v: expect.any(String) }]);
    expect(await refusal(sql, only('parser'))).toBe(
      `queryString calls ${name}(), which is not on the function allow-list`,
    );
  });
});

describe('the database wall alone', () => {
  test('a private table, named in any way the parser would refuse, fails in the database', async () => {
    for (const sql of [
      'SELECT * FROM "ApiKey"',
      'SELECT id FROM siteserver_Site UNION SELECT id FROM "ApiKey"',
    ]) {
      expect((await run(sql, NONE)).length).toBeGreaterThan(0);
      const message = await refusal(sql, only('database'));
      expect(message).toMatch(
        database.handle.provider === 'sqlite'
          ? /^queryString was refused by the database: it reads ApiKey, which is not behind a public view$/
          : /^queryString was refused by the database: permission denied for table ApiKey$/,
      );
    }
  });

  test('the views themselves read fine behind it', async () => {
    expect(await run('SELECT id FROM siteserver_Site ORDER BY id', only('database'))).toEqual([
      { id: 1 },
      { id: 2 },
      { id: 3 },
    ]);
  });

  test('the raw content table (pending and recycled contents) is refused on PostgreSQL', async () => {
    if (database.handle.provider !== 'postgresql') return;
    expect(await refusal('SELECT id FROM "Content"', only('database'))).toBe(
      'queryString was refused by the database: permission denied for table Content',
    );
  });

  test('the schema table and schema reads are refused on SQLite', async () => {
    if (database.handle.provider !== 'sqlite') return;
    expect((await run('SELECT name FROM sqlite_schema', NONE)).length).toBeGreaterThan(0);
    expect(await refusal('SELECT name FROM sqlite_schema', only('database'))).toBe(
      'queryString was refused by the database: it reads sqlite_schema, which is not behind a public view',
    );
    expect(await refusal("SELECT * FROM pragma_table_info('User')", only('database'))).toBe(
      'queryString was refused by the database: it opens a virtual table',
    );
    expect(await refusal('PRAGMA schema_version', only('database'))).toBe(
      'queryString was refused by the database: it uses the ReadCookie operation',
    );
  });

  test('nothing is written: a write is refused, and FOR UPDATE in the read-only transaction', async () => {
    const sqlite = database.handle.provider === 'sqlite';
    const sql = sqlite ? "UPDATE Site SET siteName = 'x'" : 'SELECT id FROM siteserver_site FOR UPDATE';
    expect(await refusal(sql, only('database'))).toMatch(/^queryString was refused by the database: /);
    const sites = await database.handle.db.site.findMany({ orderBy: { id: 'asc' } });
    expect(sites.map((site) => site.siteName)).toEqual(['Main site', 'English news', 'Archive']);
  });
});

describe('the limits wall alone', () => {
  const endless =
    'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) AS c FROM n';

  test('a query that never ends is stopped at the time limit', async () => {
    expect(await refusal(endless, only('limits'))).toBe(
      'queryString ran longer than the time limit of 500 ms and was stopped',
    );
    // The sandbox answers again after stopping it.
    expect(await run('SELECT count(*) AS c FROM siteserver_Site', NONE)).toEqual([{ c: 3 }]);
  });

  test('the row cap stops the cursor', async () => {
    const fifty =
      'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 50) SELECT x FROM n';
    expect(await run(fifty, NONE)).toHaveLength(50);
    const capped = await run(fifty, only('limits'));
    expect(capped).toEqual(Array.from({ length: 10 }, (_, index) => ({ x: index + 1 })));
  });

  test('the answer size cap stops the rows before they reach the service', async () => {
    const wide =
      database.handle.provider === 'sqlite'
        ? "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT printf('%0500d', x) AS v FROM n"
        : "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT lpad(x::text, 500, '0') AS v FROM n";
    const rows = await run(wide, NONE);
    expect(rows).toHaveLength(5);
    expect(rows[4]).toEqual({ v: `${'0'.repeat(499)}5` });
    expect(await refusal(wide, only('limits'))).toBe(
      'queryString answers more than 2000 bytes and was stopped; select fewer columns or rows (LIMIT)',
    );
    // One value past the cap is stopped in the database, before the driver reads it.
    const huge =
      database.handle.provider === 'sqlite'
        ? "SELECT printf('%.*c', 5000000, 'x') AS v"
        : "SELECT lpad('x', 5000000) AS v";
    expect(await refusal(huge, only('limits'))).toMatch(/^queryString answers more than 2000 bytes/);
    // A column named like the sandbox's alias for the query is measured like any other.
    const named = wide.replace(' AS v FROM n', ' AS v, 1 AS cms_sandbox_query FROM n');
    expect(await run(named, NONE)).toHaveLength(5);
    expect(await refusal(named, only('limits'))).toMatch(/^queryString answers more than 2000 bytes/);
    // Under the cap the same shape answers, in order.
    expect(await run(wide.replace('x < 5', 'x < 3'), only('limits'))).toHaveLength(3);
  });

  test('a text longer than the limit', async () => {
    const long = `SELECT id AS ${'a'.repeat(10_000)} FROM siteserver_Site WHERE id = 1`;
    expect(await run(long, NONE)).toHaveLength(1);
    expect(await refusal(long, only('limits'))).toBe('queryString is longer than 10000 characters');
  });
});
