import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Request } from 'express';
import { contract } from '../../src/contract.ts';
import { createDb, providerOf, SERVICE_SQLITE_CACHE_KIB, sqliteFilePath } from '../../src/db/client.ts';
import { isDatabaseUnavailable, isStatementTimeLimit, isWriteConflict } from '../../src/db/databaseErrors.ts';
import { mapError } from '../../src/http/errors.ts';
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

(onSqlite ? test : test.skip)(
  "a SQLite client's page cache is the size asked for (the workers' quarter of the default), its reads the same",
  async () => {
    const { db } = await createDb(database.url, { sqliteCacheKib: SERVICE_SQLITE_CACHE_KIB });
    const { db: unbounded } = await createDb(database.url);
    try {
      // A negative size is in KiB; Prisma reads the integer as a bigint.
      const [asked] = await db.$queryRawUnsafe<{ cache_size: bigint }[]>('PRAGMA cache_size');
      expect(asked?.cache_size).toBe(BigInt(-SERVICE_SQLITE_CACHE_KIB));
      const [usual] = await unbounded.$queryRawUnsafe<{ cache_size: bigint }[]>('PRAGMA cache_size');
      expect(usual?.cache_size).not.toBe(BigInt(-SERVICE_SQLITE_CACHE_KIB));
      const everything = 'SELECT name, sql FROM sqlite_master ORDER BY name';
      expect(await db.$queryRawUnsafe(everything)).toEqual(await unbounded.$queryRawUnsafe(everything));
    } finally {
      await db.$disconnect();
      await unbounded.$disconnect();
    }
  },
);

(onSqlite ? test.skip : test)(
  'PostgreSQL ends a statement past statement_timeout; the error reads as a time limit (503), the pool lives on',
  async () => {
    const { db } = await createDb(database.url, { statementTimeoutMs: 100 });
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

(onSqlite ? test.skip : test)(
  'PostgreSQL gives up one of two deadlocked transactions; the error reads as a write conflict (503), not a 500',
  async () => {
    const { db } = database.handle;
    await db.$executeRawUnsafe('CREATE TABLE deadlock_probe (id integer PRIMARY KEY, v integer NOT NULL)');
    await db.$executeRawUnsafe('INSERT INTO deadlock_probe VALUES (1, 0), (2, 0)');
    // Each transaction locks its own row, then (once the other holds its row) asks for the other's.
    let release: (() => void)[] = [];
    const bothHold = new Promise<void>((resolve) => {
      let held = 0;
      release = [0, 1].map(() => () => {
        held += 1;
        if (held === 2) resolve();
      });
    });
    const crossing = (first: number, second: number, holds: () => void) =>
      db.$transaction(
        async (tx) => {
          await tx.$executeRawUnsafe('UPDATE deadlock_probe SET v = v + 1 WHERE id = $1', first);
          holds();
          await bothHold;
          await tx.$executeRawUnsafe('UPDATE deadlock_probe SET v = v + 1 WHERE id = $1', second);
        },
        { timeout: 30_000 },
      );
    const outcomes = await Promise.allSettled([
      crossing(1, 2, release[0] as () => void),
      crossing(2, 1, release[1] as () => void),
    ]);
    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    expect(failures).toHaveLength(1);
    expect(isWriteConflict(failures[0])).toBe(true);
    expect(isDatabaseUnavailable(failures[0])).toBe(false);
    const mapped = mapError(failures[0], {} as Request, 'test', contract);
    expect(mapped.body).toMatchObject({
      status: 503,
      type: 'https://cms.example/problems/service-unavailable',
    });
    expect(mapped.headers?.['Retry-After']).toMatch(/^\d+$/);
    // The loser wrote nothing: one transaction's two increments only.
    const rows = await db.$queryRawUnsafe<{ v: number }[]>('SELECT v FROM deadlock_probe ORDER BY id');
    expect(rows.map((row) => row.v)).toEqual([1, 1]);
  },
);
