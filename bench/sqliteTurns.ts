/**
 * What the turns of SQLite's one connection (src/db/sqliteTurns.ts) cost a statement that finds no
 * transaction open, measured in one process on one database file: the service's client
 * (`createDb`, with the turns) against a client made as `createDb` made it before them (the same
 * adapter, time limit, pragmas and BEGIN IMMEDIATE, no turns), in alternating rounds so that the
 * shared machine's load falls on both alike. One operation at a time: a get by id through Prisma,
 * a point read through the driver, a single-statement update, an update in a write transaction.
 * Prints each operation's median time per call over the rounds and the ratio with/without; the
 * writes make a tenth of the calls the reads make (each waits for its commit).
 * Usage: tsx bench/sqliteTurns.ts [--calls N] [--rounds N]   (bench/README.md, "Statements wait for an open transaction")
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import {
  createDb,
  type Db,
  DEFAULT_SQLITE_QUERY_TIMEOUT_MS,
  SQLITE_BUSY_TIMEOUT_MS,
  SQLITE_TIMESTAMP_FORMAT,
} from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate/index.ts';
import { type PointReads, sqlitePointReads } from '../src/db/pointReads.ts';
import { withTimeLimit } from '../src/db/sqliteTimeLimit.ts';
import type { ConnectionTurns } from '../src/db/sqliteTurns.ts';
import { beginImmediateForWrites, writeTransaction } from '../src/db/transaction.ts';
import { issueApiKey } from '../src/domain/apiKeys/issueApiKey.ts';
import { digestApiKey } from '../src/domain/crypto/apiKeys.ts';
import { SYSTEM_ACTOR } from '../src/domain/events/actor.ts';
import { PrismaClient as SqliteClient } from '../src/generated/prisma/sqlite/client.ts';
import { median } from './stats.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '10' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

/** A client as createDb made it before the turns: every statement straight onto the connection. */
function clientWithoutTurns(file: string): { db: Db; reads: PointReads } {
  let connection: BetterSqlite3.Database | undefined;
  const straight = { statement: (run: () => unknown) => run() } as unknown as ConnectionTurns;
  const adapter = withTimeLimit(
    new PrismaBetterSqlite3(
      { url: file, timeout: SQLITE_BUSY_TIMEOUT_MS },
      { timestampFormat: SQLITE_TIMESTAMP_FORMAT },
    ),
    DEFAULT_SQLITE_QUERY_TIMEOUT_MS,
    (opened) => {
      opened.pragma('synchronous = NORMAL');
      // Without turns nothing marks a transaction as writing: its writes begin with a plain BEGIN.
      beginImmediateForWrites(opened, SQLITE_BUSY_TIMEOUT_MS, straight);
      connection = opened;
      return undefined;
    },
  );
  const db = new SqliteClient({ adapter }) as Db;
  const reads = sqlitePointReads(async () => {
    if (connection === undefined) await db.$connect();
    if (connection === undefined) throw new Error('no connection');
    return connection;
  }, straight);
  return { db, reads };
}

const dir = mkdtempSync(join(tmpdir(), 'bench-turns-'));
const file = join(dir, 'cms.db');
const url = `file:${file}`;
try {
  await applyMigrations(url);
  const withTurns = await createDb(url);
  const { key } = await issueApiKey(withTurns.db, { title: 'bench', scopes: [] }, SYSTEM_ACTOR);
  const digest = digestApiKey(key);
  const { id } = await withTurns.db.apiKey.findUniqueOrThrow({ where: { digest }, select: { id: true } });
  await withTurns.db.systemSetting.create({ data: { key: 'bench', value: '0' } });
  const without = clientWithoutTurns(file);

  let counter = 0;
  const operations: Record<string, (client: { db: Db; reads: PointReads }) => Promise<unknown>> = {
    'get by id (Prisma)': ({ db }) => db.apiKey.findUnique({ where: { id } }),
    'point read': ({ reads }) => reads.apiKeyByDigest(digest),
    'update, one statement': ({ db }) =>
      db.systemSetting.update({ where: { key: 'bench' }, data: { value: String(++counter) } }),
    'update in writeTransaction': ({ db }) =>
      writeTransaction(db, (tx) =>
        tx.systemSetting.update({ where: { key: 'bench' }, data: { value: String(++counter) } }),
      ),
  };
  const clients = { with: { db: withTurns.db, reads: withTurns.reads }, without };
  const start = loadavg()[0] ?? 0;
  console.log(
    `${calls} reads or ${Math.round(calls / 10)} writes a round, ${rounds} rounds; load average ${start.toFixed(1)} at the start`,
  );
  console.log('operation                     without µs  with µs  with/without');
  for (const [name, operation] of Object.entries(operations)) {
    const times: Record<'with' | 'without', number[]> = { with: [], without: [] };
    // One warm-up round each: prepared statements, Prisma's compiled query plans.
    for (const side of ['with', 'without'] as const)
      for (let i = 0; i < 200; i += 1) await operation(clients[side]);
    const count = name.startsWith('update') ? Math.max(1, Math.round(calls / 10)) : calls;
    for (let round = 0; round < rounds; round += 1) {
      const order = round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const);
      for (const side of order) {
        const began = performance.now();
        for (let i = 0; i < count; i += 1) await operation(clients[side]);
        times[side].push(((performance.now() - began) * 1000) / count);
      }
    }
    const [a, b] = [median(times.without), median(times.with)];
    console.log(
      `${name.padEnd(30)}${a.toFixed(1).padStart(10)}${b.toFixed(1).padStart(9)}${(b / a).toFixed(3).padStart(14)}`,
    );
  }
  console.log(`load average ${(loadavg()[0] ?? 0).toFixed(1)} at the end`);
  await without.db.$disconnect();
  await withTurns.db.$disconnect();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
