import type BetterSqlite3 from 'better-sqlite3';
import type { Prisma } from '../generated/prisma/sqlite/client.ts';
import type { Db } from './client.ts';
import { isSqliteBusy, isWriteConflict } from './databaseErrors.ts';
import type { AdapterConnection } from './keptStatements.ts';
import { type ConnectionTurns, connectionTurnsOf } from './sqliteTurns.ts';

/*
 * Every transaction that writes goes through writeTransaction (docs/security/time-limits.md,
 * "Write contention"). On SQLite it begins with `BEGIN IMMEDIATE`: the transaction takes the file's
 * one write lock before its first statement, waiting for it while another process writes (in short
 * tries that hold the thread, with pauses that free it between them). A plain `BEGIN` (what Prisma's adapter sends) reads first and asks for the
 * lock at its first write; when another process committed in between, SQLite cannot let it write
 * (its snapshot is stale) and fails at once, without waiting. On PostgreSQL the transaction is
 * unchanged; a deadlock or serialisation failure there wrote nothing, and is retried here, once.
 */

export type Tx = Prisma.TransactionClient;

/**
 * How long `BEGIN IMMEDIATE` itself waits for the lock, holding the thread. Short: the transaction
 * tries again after a pause that frees the thread, until SQLITE_WRITE_LOCK_WAIT_MS.
 */
const BEGIN_BUSY_TIMEOUT_MS = 100;

const DONE = { changes: 0, lastInsertRowid: 0 };

/**
 * Makes Prisma's SQLite adapter begin write transactions IMMEDIATE. The adapter begins every
 * transaction by preparing and running a plain `BEGIN`, after taking its connection's transaction
 * mutex; it releases that mutex only at commit or rollback, not when `BEGIN` fails. So the `BEGIN`
 * of a write transaction is replaced by a statement that runs `BEGIN IMMEDIATE` and, when the lock
 * stays taken, begins an ordinary transaction instead and fails the transaction's first statement
 * with SQLite's busy error: Prisma then rolls back (releasing the mutex) and writeTransaction tries
 * again.
 */
export function beginImmediateForWrites(
  connection: AdapterConnection,
  busyTimeoutMs: number,
  turns: ConnectionTurns,
): void {
  const prepare = connection.prepare.bind(connection);
  const swapped = (source: string) => {
    const attempt = turns.writing;
    if (attempt === undefined) return prepare(source);
    if (attempt.refused !== undefined && !source.startsWith('ROLLBACK')) throw attempt.refused;
    if (source !== 'BEGIN') return prepare(source);
    const begin = {
      run: () => {
        connection.pragma(`busy_timeout = ${BEGIN_BUSY_TIMEOUT_MS}`);
        try {
          prepare('BEGIN IMMEDIATE').run();
        } catch (error) {
          // The driver's own error: its code is SQLITE_BUSY or an extended SQLITE_BUSY_… code.
          if (!String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) throw error;
          prepare('BEGIN').run();
          attempt.refused = error;
        } finally {
          connection.pragma(`busy_timeout = ${busyTimeoutMs}`);
        }
        return DONE;
      },
    };
    return begin as unknown as BetterSqlite3.Statement;
  };
  connection.prepare = swapped as typeof connection.prepare;
}

/**
 * How long a write transaction may wait for its turn in this process (the SQLite adapter runs one
 * transaction at a time on its one connection; PostgreSQL's pool hands out a connection) before it
 * is answered 503 "the database is busy". Prisma's default, 2 s, is shorter than a burst of writes
 * queued in one worker takes to drain on a loaded machine.
 */
export const WRITE_TRANSACTION_MAX_WAIT_MS = 20_000;

/** How long a write transaction may run once begun (Prisma's default is 5 s). */
export const WRITE_TRANSACTION_TIMEOUT_MS = 20_000;

/** Attempts after the first when the database gave the transaction up for a concurrent one. */
const CONFLICT_RETRIES = 5;

/**
 * How long, in all, a SQLite write transaction keeps trying to begin while other processes hold the
 * write lock. Each try waits up to BEGIN_BUSY_TIMEOUT_MS (a wait that holds the worker's thread);
 * between tries the thread is free for a short pause.
 */
export const SQLITE_WRITE_LOCK_WAIT_MS = 15_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface WriteTransactionOptions {
  maxWait?: number;
  timeout?: number;
}

/** Runs `work` in a transaction that writes; see the note at the top of this file. */
export async function writeTransaction<T>(
  db: Db,
  work: (tx: Tx) => Promise<T>,
  options: WriteTransactionOptions = {},
): Promise<T> {
  const settings = {
    maxWait: options.maxWait ?? WRITE_TRANSACTION_MAX_WAIT_MS,
    timeout: options.timeout ?? WRITE_TRANSACTION_TIMEOUT_MS,
    // On SQLite this level (its only one) tells the connection's turns that the transaction writes,
    // so that it begins IMMEDIATE (src/db/sqliteTurns.ts, WRITE_ISOLATION_LEVEL); PostgreSQL keeps
    // its default level.
    ...(connectionTurnsOf(db) !== undefined && { isolationLevel: 'Serializable' as const }),
  };
  const lockDeadline = Date.now() + SQLITE_WRITE_LOCK_WAIT_MS;
  for (let conflicts = 0; ; ) {
    try {
      return await db.$transaction(work, settings);
    } catch (error) {
      // A transaction that began IMMEDIATE meets SQLITE_BUSY only while beginning: nothing was done.
      if (isSqliteBusy(error) && Date.now() < lockDeadline) {
        await pause(5 + Math.random() * 20);
        continue;
      }
      if (!isWriteConflict(error) || conflicts++ >= CONFLICT_RETRIES) throw error;
      // Apart by a random pause, so that the transactions that collided do not collide again.
      await pause(5 + Math.random() * 20 * conflicts);
    }
  }
}
