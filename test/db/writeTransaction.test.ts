import { afterAll, beforeAll, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import type { Request } from 'express';
import { contract } from '../../src/contract.ts';
import { createDb, type Db, sqliteFilePath } from '../../src/db/client.ts';
import { isDatabaseBusy, isDatabaseUnavailable } from '../../src/db/databaseErrors.ts';
import { writeTransaction } from '../../src/db/transaction.ts';
import { mapError } from '../../src/http/errors.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/database.ts';

/*
 * Write transactions (src/db/transaction.ts): on SQLite they take the write lock up front and wait
 * for another process's lock past one busy timeout; a write that still cannot get the lock is
 * answered 503 "busy", never "unavailable". On PostgreSQL a transaction the database gave up for a
 * concurrent one is run again.
 */

const onSqlite = testServerUrl() === undefined;

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await database.handle.db.systemSetting.create({ data: { key: 'probe', value: '0' } });
});
afterAll(() => database.drop());

/** Another process's connection to the same SQLite file, holding the write lock until released. */
function holdWriteLock(): { release: () => void } {
  const other = new Database(sqliteFilePath(database.url));
  other.prepare('BEGIN IMMEDIATE').run();
  other.prepare(`UPDATE "SystemSetting" SET "value" = '100' WHERE "key" = 'probe'`).run();
  return {
    release: () => {
      other.prepare('COMMIT').run();
      other.close();
    },
  };
}

/**
 * The SQLite clients the service makes: as tests and development run it, and production's, which
 * keeps nothing in an AsyncLocalStorage (docs/contributing/architecture.md).
 */
const CLIENTS = [
  ['as tests and development run it', true],
  ['without the check of statements inside a transaction (production)', false],
] as const;

/** The test database's client, or one made as production makes it on the same file (`done` closes it). */
async function clientOf(refusing: boolean): Promise<{ db: Db; done: () => Promise<void> }> {
  if (refusing) return { db: database.handle.db, done: async () => undefined };
  const { db } = await createDb(database.url, { refuseClientInsideTransactions: false });
  return { db, done: () => db.$disconnect() };
}

(onSqlite ? test.each : test.skip.each)(CLIENTS)(
  'a SQLite write transaction waits for the write lock another connection holds, then reads what it wrote (%s)',
  async (_how, refusing) => {
    const { db, done } = await clientOf(refusing);
    const lock = holdWriteLock();
    const writing = writeTransaction(db, async (tx) => {
      const before = await tx.systemSetting.findUniqueOrThrow({ where: { key: 'probe' } });
      await tx.systemSetting.update({
        where: { key: 'probe' },
        data: { value: String(Number(before.value) + 1) },
      });
      return before.value;
    });
    // Released once this thread is free: when the write's first try has waited a busy timeout in
    // the driver (holding the thread) and failed, or before it began.
    setTimeout(() => lock.release(), 10);
    try {
      const value = await writing;
      // The transaction began after the other commit: it read 100, not the value of a snapshot
      // taken earlier.
      expect(value).toBe('100');
      expect((await db.systemSetting.findUniqueOrThrow({ where: { key: 'probe' } })).value).toBe('101');
    } finally {
      await done();
    }
  },
);

(onSqlite ? test : test.skip)(
  'reads, and read-only transactions, do not wait for the SQLite write lock',
  async () => {
    const { db } = database.handle;
    const lock = holdWriteLock();
    try {
      const [count, rows] = await db.$transaction([
        db.systemSetting.count(),
        db.systemSetting.findMany({ where: { key: 'probe' } }),
      ]);
      expect(count).toBeGreaterThanOrEqual(1);
      expect(rows).toHaveLength(1);
    } finally {
      lock.release();
    }
  },
);

/** Whether another connection can take the write lock now (without waiting for it). */
function writeLockFree(): boolean {
  const other = new Database(sqliteFilePath(database.url), { timeout: 0 });
  try {
    other.prepare('BEGIN IMMEDIATE').run();
    other.prepare('ROLLBACK').run();
    return true;
  } catch (error) {
    if (!String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) throw error;
    return false;
  } finally {
    other.close();
  }
}

(onSqlite ? test.each : test.skip.each)(CLIENTS)(
  'a SQLite write transaction holds the write lock from its BEGIN, before its first statement; an interactive read-only transaction does not (%s)',
  async (_how, refusing) => {
    const { db, done } = await clientOf(refusing);
    try {
      expect(await writeTransaction(db, async () => writeLockFree())).toBe(false);
      expect(await db.$transaction(async () => writeLockFree())).toBe(true);
      expect(writeLockFree()).toBe(true);
    } finally {
      await done();
    }
  },
);

(onSqlite ? test : test.skip)(
  'a write the SQLite lock keeps out past the busy timeout reads as busy: 503 with Retry-After, not "unavailable"',
  async () => {
    const { db } = database.handle;
    const lock = holdWriteLock();
    let error: unknown;
    try {
      // A single statement, outside a write transaction: one busy timeout, then SQLITE_BUSY.
      error = await db.systemSetting.update({ where: { key: 'probe' }, data: { value: 'x' } }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
    } finally {
      lock.release();
    }
    expect(error).toBeDefined();
    expect(isDatabaseBusy(error)).toBe(true);
    expect(isDatabaseUnavailable(error)).toBe(false);
    const mapped = mapError(error, {} as Request, 'test', contract);
    expect(mapped.body).toMatchObject({
      status: 503,
      detail: 'The database is busy with other writes; retry later',
    });
    expect(mapped.headers?.['Retry-After']).toMatch(/^\d+$/);
  },
);

(onSqlite ? test.skip : test)(
  'a PostgreSQL write transaction the database gave up for a deadlock runs again and succeeds',
  async () => {
    const { db } = database.handle;
    await db.$executeRawUnsafe('CREATE TABLE retry_probe (id int PRIMARY KEY, v int NOT NULL)');
    await db.$executeRawUnsafe('INSERT INTO retry_probe VALUES (1, 0), (2, 0)');
    let held = 0;
    let bothHold: () => void = () => {};
    const together = new Promise<void>((resolve) => {
      bothHold = resolve;
    });
    let runs = 0;
    const crossing = (first: number, second: number) =>
      writeTransaction(db, async (tx) => {
        runs += 1;
        await tx.$executeRawUnsafe('UPDATE retry_probe SET v = v + 1 WHERE id = $1', first);
        held += 1;
        if (held === 2) bothHold();
        // Only the first runs wait for each other; the retried one goes straight through.
        if (held <= 2) await together;
        await tx.$executeRawUnsafe('UPDATE retry_probe SET v = v + 1 WHERE id = $1', second);
      });
    await Promise.all([crossing(1, 2), crossing(2, 1)]);
    expect(runs).toBe(3);
    const rows = await db.$queryRawUnsafe<{ v: number }[]>('SELECT v FROM retry_probe ORDER BY id');
    expect(rows.map((row) => row.v)).toEqual([2, 2]);
  },
);
