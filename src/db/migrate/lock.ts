import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { providerOf, sqliteFilePath } from '../client.ts';
import { isSqliteBusy, MigrationError } from './errors.ts';

/*
 * One process at a time applies migrations to a database; the others wait here and then find
 * nothing left to do. Both locks belong to an open connection, so the operating system or the
 * server releases them when their holder dies: a crashed process never leaves a stale lock.
 *
 * - PostgreSQL: a session advisory lock (its own key; the engine takes Prisma's key inside).
 * - SQLite: an exclusive transaction on a small database file beside the real one
 *   (`<file>.migrate-lock`). Not the real file: the engine needs that one to itself. The lock file
 *   is never deleted: removing it while another process waits on it would let two hold a lock.
 */

/** How long a process waits for another one to finish applying migrations. */
export const MIGRATION_LOCK_WAIT_MS = 120_000;
const POLL_MS = 100;
/** Arbitrary, fixed, and different from the engine's own advisory lock key (72707369). */
const ADVISORY_LOCK_KEY = 727073690;

/**
 * Connections that hold a lock, kept reachable: a holder whose work awaits something that nothing
 * else references could otherwise be collected, and the driver would close (so release) it.
 */
// Process-wide by nature (a lock is the process's): each entry leaves when its lock is released.
const holding = new Set<object>();

interface HeldLock {
  release(): Promise<void>;
}

export function migrationLockFile(databaseUrl: string): string {
  return `${sqliteFilePath(databaseUrl)}.migrate-lock`;
}

/** Runs `work` while this process alone may apply migrations to the database. */
export async function withMigrationLock<T>(
  databaseUrl: string,
  work: () => Promise<T>,
  waitMs = MIGRATION_LOCK_WAIT_MS,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  const lock =
    providerOf(databaseUrl) === 'sqlite'
      ? await lockSqlite(migrationLockFile(databaseUrl), deadline)
      : await lockPostgres(databaseUrl, deadline);
  if (lock === undefined) {
    throw new MigrationError(
      `another process has been applying migrations to this database for more than ${waitMs < 1000 ? `${waitMs} ms` : `${Math.round(waitMs / 1000)} s`}; make sure it is not stuck, then try again`,
    );
  }
  try {
    return await work();
  } finally {
    await lock.release();
  }
}

async function lockSqlite(file: string, deadline: number): Promise<HeldLock | undefined> {
  // timeout 0: a busy lock answers at once, and the wait below keeps the event loop free.
  const db = new Database(file, { timeout: 0 });
  try {
    for (;;) {
      try {
        db.exec('BEGIN EXCLUSIVE');
        holding.add(db);
        return {
          async release() {
            holding.delete(db);
            db.exec('ROLLBACK');
            db.close();
          },
        };
      } catch (error) {
        if (!isSqliteBusy(error)) throw error;
      }
      if (Date.now() >= deadline) break;
      await sleep(POLL_MS);
    }
  } catch (error) {
    db.close();
    throw error;
  }
  db.close();
  return undefined;
}

async function lockPostgres(databaseUrl: string, deadline: number): Promise<HeldLock | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
        ADVISORY_LOCK_KEY,
      ]);
      if (rows[0]?.locked) {
        holding.add(client);
        return {
          async release() {
            holding.delete(client);
            // Ending the session releases the lock as well; unlocking first says so plainly.
            await client.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCK_KEY]).catch(() => {});
            await client.end();
          },
        };
      }
      if (Date.now() >= deadline) break;
      await sleep(POLL_MS);
    }
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  await client.end();
  return undefined;
}
