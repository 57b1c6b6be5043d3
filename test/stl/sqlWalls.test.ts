import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { SqlExecutor } from '../../src/db/sandbox/executor.ts';
import { closeSandboxes, sandboxFor } from '../../src/db/sandbox/index.ts';
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
let executor: SqlExecutor;

beforeAll(async () => {
  database = await createTestDatabase();
  await loadStlFixture(database.handle.db, new Date());
  await database.handle.db.apiKey.create({
    data: { title: 'secret', digest: 'not-a-real-digest', scopes: 'STL' },
  });
  executor = sandboxFor(database.url);
});
afterAll(async () => {
  await closeSandboxes();
  await database.drop();
});

const limits: SandboxLimits = { maxRows: 10, timeoutMs: 500, maxLength: 10_000 };
const NONE: SandboxWalls = { parser: false, database: false, limits: false };
const only = (wall: keyof SandboxWalls): SandboxWalls => ({ ...NONE, [wall]: true });

const run = (sql: string, walls: SandboxWalls) => runSqlContents(executor, sql, limits, walls);

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

  test('a text longer than the limit', async () => {
    const long = `SELECT id AS ${'a'.repeat(10_000)} FROM siteserver_Site WHERE id = 1`;
    expect(await run(long, NONE)).toHaveLength(1);
    expect(await refusal(long, only('limits'))).toBe('queryString is longer than 10000 characters');
  });
});
