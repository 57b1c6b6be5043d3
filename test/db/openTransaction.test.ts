import { afterAll, beforeAll, beforeEach, expect, test } from '@jest/globals';
import type { Db } from '../../src/db/client.ts';
import { connectionTurnsOf } from '../../src/db/sqliteTurns.ts';
import { type Tx, writeTransaction } from '../../src/db/transaction.ts';
import { issueApiKey } from '../../src/domain/apiKeys/issueApiKey.ts';
import { digestApiKey } from '../../src/domain/crypto/apiKeys.ts';
import { SYSTEM_ACTOR } from '../../src/domain/events/actor.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/database.ts';

/*
 * A statement issued on the client while another caller's interactive transaction is open and
 * waiting (src/db/sqliteTurns.ts): on SQLite the client has one connection, and a statement that ran
 * on it then ran inside that transaction — it read the transaction's uncommitted writes, and its own
 * write was undone when the transaction rolled back. It now waits for the transaction to end. On
 * PostgreSQL the statement takes another connection of the pool: the same tests pass there.
 * The order is explicit: the transaction writes, then waits on a promise the test releases once the
 * other statement has either answered (what it did before) or is waiting for its turn.
 */

const onSqlite = testServerUrl() === undefined;

let database: TestDatabase;
let apiKey: string;
beforeAll(async () => {
  database = await createTestDatabase();
  apiKey = (await issueApiKey(database.handle.db, { title: 'committed', scopes: [] }, SYSTEM_ACTOR)).key;
});
afterAll(() => database.drop());

beforeEach(async () => {
  const { db } = database.handle;
  await db.systemSetting.deleteMany();
  await db.systemSetting.create({ data: { key: 'probe', value: 'committed' } });
});

class RolledBack extends Error {}

/** Statements waiting on the SQLite client's connection for an open transaction to end (none on PostgreSQL). */
function waiting(db: Db): number {
  return connectionTurnsOf(db)?.waiting ?? 0;
}

/**
 * Runs `during` while a write transaction that has run `write` is open, then ends that transaction
 * (rolled back, or committed) once `during` has answered or is waiting for its turn; `during`'s
 * outcome.
 */
async function whileOpen<T>(
  write: (tx: Tx) => Promise<unknown>,
  during: () => Promise<T>,
  end: 'rollback' | 'commit' = 'rollback',
): Promise<T> {
  const { db } = database.handle;
  let opened: () => void = () => {};
  const isOpen = new Promise<void>((resolve) => {
    opened = resolve;
  });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const transaction = writeTransaction(db, async (tx) => {
    await write(tx);
    opened();
    await released;
    if (end === 'rollback') throw new RolledBack('the transaction failed after its first write');
  });
  const settledTransaction = transaction.then(
    () => 'committed',
    (error: unknown) => (error instanceof RolledBack ? 'rolled back' : error),
  );
  await isOpen;
  let settled = false;
  const other = during().finally(() => {
    settled = true;
  });
  // Not a timer: each round lets every pending callback run once, until the statement has either
  // answered or queued behind the transaction.
  while (!settled && waiting(db) === 0) await new Promise((resolve) => setImmediate(resolve));
  release();
  expect(await settledTransaction).toBe(end === 'rollback' ? 'rolled back' : 'committed');
  return other;
}

const probe = (db: Db | Tx) => db.systemSetting.findUniqueOrThrow({ where: { key: 'probe' } });

test('a read on the client while another transaction is open sees only what was committed', async () => {
  const { db } = database.handle;
  const read = await whileOpen(
    (tx) => tx.systemSetting.update({ where: { key: 'probe' }, data: { value: 'uncommitted' } }),
    () => probe(db),
  );
  expect(read.value).toBe('committed');
  expect((await probe(db)).value).toBe('committed');
});

test('a read on the client while another transaction is open, which then commits, sees the commit', async () => {
  const { db } = database.handle;
  const read = await whileOpen(
    (tx) => tx.systemSetting.update({ where: { key: 'probe' }, data: { value: 'written' } }),
    () => probe(db),
    'commit',
  );
  // On SQLite the read waited for the commit; on PostgreSQL it read the snapshot before it.
  expect(read.value).toBe(onSqlite ? 'written' : 'committed');
  expect((await probe(db)).value).toBe('written');
});

test("a write on the client while another transaction is open survives that transaction's rollback", async () => {
  const { db } = database.handle;
  const written = await whileOpen(
    (tx) => tx.systemSetting.update({ where: { key: 'probe' }, data: { value: 'uncommitted' } }),
    () => db.systemSetting.create({ data: { key: 'other', value: 'acknowledged' } }),
  );
  expect(written.value).toBe('acknowledged');
  const rows = await db.systemSetting.findMany({ orderBy: { key: 'asc' } });
  expect(rows.map(({ key, value }) => [key, value])).toEqual([
    ['other', 'acknowledged'],
    ['probe', 'committed'],
  ]);
});

test('a raw statement on the client while another transaction is open sees only what was committed', async () => {
  const { db } = database.handle;
  const rows = await whileOpen(
    (tx) => tx.systemSetting.update({ where: { key: 'probe' }, data: { value: 'uncommitted' } }),
    () => db.$queryRaw<{ value: string }[]>`SELECT "value" FROM "SystemSetting" WHERE "key" = 'probe'`,
  );
  expect(rows).toEqual([{ value: 'committed' }]);
});

test('a point read while another transaction is open sees only what was committed', async () => {
  const { db, reads } = database.handle;
  const digest = digestApiKey(apiKey);
  const read = await whileOpen(
    (tx) => tx.apiKey.update({ where: { digest }, data: { title: 'uncommitted' } }),
    () => reads.apiKeyByDigest(digest),
  );
  expect(read?.title).toBe('committed');
  expect((await db.apiKey.findUniqueOrThrow({ where: { digest } })).title).toBe('committed');
});

test('statements through the transaction itself do not wait, and read its own writes', async () => {
  const { db } = database.handle;
  const value = await writeTransaction(db, async (tx) => {
    await tx.systemSetting.update({ where: { key: 'probe' }, data: { value: 'mine' } });
    const [row] = await tx.$queryRaw<
      { value: string }[]
    >`SELECT "value" FROM "SystemSetting" WHERE "key" = 'probe'`;
    return [(await probe(tx)).value, row?.value];
  });
  expect(value).toEqual(['mine', 'mine']);
});

(onSqlite ? test : test.skip)(
  "a statement on the client inside a transaction's own work fails at once instead of waiting for that transaction",
  async () => {
    const { db, reads } = database.handle;
    const misuses: [string, () => Promise<unknown>][] = [
      ['a model read', () => probe(db)],
      ['a write', () => db.systemSetting.update({ where: { key: 'probe' }, data: { value: 'x' } })],
      ['a raw query', () => db.$queryRaw`SELECT 1`],
      ['a point read', () => reads.apiKeyByDigest(digestApiKey(apiKey))],
    ];
    for (const [, misuse] of misuses) {
      const outcome = writeTransaction(db, async (tx) => {
        await tx.systemSetting.update({ where: { key: 'probe' }, data: { value: 'uncommitted' } });
        await misuse();
      });
      await expect(outcome).rejects.toThrow(
        'A statement on the SQLite client ran inside an open transaction of the same client',
      );
    }
    // Each transaction rolled back; the client serves statements again.
    expect((await probe(db)).value).toBe('committed');
  },
);

(onSqlite ? test : test.skip)(
  'statements and transactions that wait for an open transaction then take the connection in the order they came',
  async () => {
    const { db } = database.handle;
    let opened: () => void = () => {};
    const isOpen = new Promise<void>((resolve) => {
      opened = resolve;
    });
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = writeTransaction(db, async (tx) => {
      await tx.systemSetting.update({ where: { key: 'probe' }, data: { value: 'first' } });
      opened();
      await released;
    });
    await isOpen;
    const until = async (count: number) => {
      while (waiting(db) < count) await new Promise((resolve) => setImmediate(resolve));
    };
    const second = db.systemSetting.update({ where: { key: 'probe' }, data: { value: 'second' } });
    void second.then(() => {});
    await until(1);
    const third = writeTransaction(db, async (tx) => (await probe(tx)).value);
    await until(2);
    release();
    await first;
    expect((await second).value).toBe('second');
    // The transaction that came after the plain write read it.
    expect(await third).toBe('second');
    expect(waiting(db)).toBe(0);
  },
);
