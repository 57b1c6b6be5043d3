import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createDb, prepareDatabase, providerOf, sqliteFilePath } from '../../src/db/client.ts';
import { isDatabaseUnavailable, isStatementTimeLimit } from '../../src/http/databaseErrors.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

test('the provider follows the DATABASE_URL scheme', () => {
  expect(providerOf('file:./data/cms.db')).toBe('sqlite');
  expect(providerOf('postgresql://u@h/db')).toBe('postgresql');
  expect(providerOf('postgres://u@h/db')).toBe('postgresql');
  expect(() => providerOf('mysql://u@h/db')).toThrow(
    'DATABASE_URL must start with file: (SQLite) or postgresql://',
  );
  expect(sqliteFilePath('file:/tmp/x.db?mode=rw')).toBe('/tmp/x.db');
});

const onSqlite = testServerUrl() === undefined;

(onSqlite ? test : test.skip)('a prepared SQLite database runs in WAL mode', async () => {
  await prepareDatabase(database.handle);
  const [mode] = await database.handle.db.$queryRawUnsafe<{ journal_mode: string }[]>('PRAGMA journal_mode');
  expect(mode?.journal_mode).toBe('wal');
});

(onSqlite ? test.skip : test)(
  'PostgreSQL ends a statement past statement_timeout; the error reads as a time limit (503), the pool lives on',
  async () => {
    const { db } = createDb(database.url, { statementTimeoutMs: 100 });
    try {
      const error = await db.$queryRawUnsafe('SELECT pg_sleep(5)').then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeDefined();
      expect(isStatementTimeLimit(error)).toBe(true);
      expect(isDatabaseUnavailable(error)).toBe(false);
      expect(await db.$queryRawUnsafe('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await db.$disconnect();
    }
  },
);
