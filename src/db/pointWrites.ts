import type BetterSqlite3 from 'better-sqlite3';
import { type SqliteStatement, sqliteRowReader } from './pointReads.ts';

/*
 * The writes of the hot paths (a content's update and create) through the driver, as the point
 * reads are (src/db/pointReads.ts): on SQLite, one transaction that runs from `BEGIN IMMEDIATE` to
 * `COMMIT` in one synchronous call on the adapter's own connection, with statements prepared once
 * and kept. Through Prisma's client the same write cost several times its statements: the query
 * compiler and the interactive transaction's machinery around every statement, and the adapter
 * preparing each statement again, the INSERT with every trigger of the table (bench/WRITES.md).
 *
 * It is a fast path, never the only one: `transaction` answers undefined whenever it cannot run the
 * write that way — the connection is inside another transaction (a Prisma interactive transaction
 * of another request waits there for something), another process holds the write lock, a
 * statement failed, or the work itself declines (a row that is not there) — and then nothing was
 * written and the caller takes its ordinary path through writeTransaction, which waits, retries and
 * reports errors as every write does. On PostgreSQL `transaction` always answers undefined; a write
 * that fits in one statement may use `statement` instead.
 */

export type Row = Record<string, unknown>;

/** The statements of one synchronous write transaction. */
export interface SyncWrite {
  /** Runs a statement that returns rows; DATETIME and BOOLEAN columns come back as the model's. */
  all(sqlText: string, params: readonly unknown[]): Row[];
  /** Runs a statement for its effect: the rows it changed and the last inserted row id. */
  run(sqlText: string, params: readonly unknown[]): { changes: number; lastInsertRowid: number };
}

/** Returned by a transaction's work to decline: the transaction is rolled back. */
export const DECLINED: unique symbol = Symbol('declined');

export interface PointWrites {
  /**
   * Runs `work` as one write transaction, synchronously; its result, or undefined when the write
   * could not be made this way (see the note above) and nothing was written.
   */
  transaction<T>(work: (tx: SyncWrite) => T | typeof DECLINED): T | undefined;
  /**
   * PostgreSQL only: runs one statement on the client's pool, outside any transaction (atomic by
   * itself), its rows as the model's. A write that fits one statement saves the round trips of
   * `BEGIN`, each statement and `COMMIT`.
   */
  statement?: (sqlText: string, params: readonly unknown[]) => Promise<Row[]>;
}

/** No fast path: every write takes its ordinary one. */
export const NO_POINT_WRITES: PointWrites = { transaction: () => undefined };

/** How long `BEGIN IMMEDIATE` waits, holding the thread, for another process's write lock. */
const BEGIN_BUSY_TIMEOUT_MS = 20;

/** Statements kept per connection (each kind: rows read, effects). */
const MAX_KEPT = 256;

type QueryObserver = ((sqlText: string, durationMs: number) => void) | undefined;

/** A value as SQLite stores the model's (the adapter's unixepoch-ms dates, booleans as 0/1). */
function stored(value: unknown): unknown {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/**
 * Point writes on the SQLite adapter's connection; `connection` gives it when it is open
 * (undefined before the client's first query or after it closed: the caller's ordinary path opens it).
 */
export function sqlitePointWrites(
  connection: () => BetterSqlite3.Database | undefined,
  busyTimeoutMs: number,
  observe?: QueryObserver,
): PointWrites {
  // Per connection: a statement belongs to the connection that prepared it.
  const effects = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement<unknown[]>>>();
  const readers = new WeakMap<BetterSqlite3.Database, Map<string, SqliteStatement>>();
  const keptOn = <T>(
    kept: WeakMap<BetterSqlite3.Database, Map<string, T>>,
    database: BetterSqlite3.Database,
  ) => {
    const found = kept.get(database);
    if (found !== undefined) return found;
    const made = new Map<string, T>();
    kept.set(database, made);
    return made;
  };
  /** The statement of this text, prepared once; the texts vary with the columns a write sets. */
  const keep = <T>(statements: Map<string, T>, sqlText: string, prepare: () => T): T => {
    const found = statements.get(sqlText);
    if (found !== undefined) return found;
    // Kept without bound, odd writes would pile up.
    if (statements.size >= MAX_KEPT) statements.clear();
    const made = prepare();
    statements.set(sqlText, made);
    return made;
  };
  const statementOf = (database: BetterSqlite3.Database, sqlText: string) =>
    keep(keptOn(effects, database), sqlText, () => database.prepare<unknown[]>(sqlText));
  const timed = <T>(sqlText: string, run: () => T): T => {
    if (observe === undefined) return run();
    const start = performance.now();
    const result = run();
    observe(sqlText, performance.now() - start);
    return result;
  };
  return {
    transaction(work) {
      const database = connection();
      if (database === undefined || !database.open || database.inTransaction) return undefined;
      const control = (sqlText: string) =>
        timed(sqlText, () => {
          const statement = statementOf(database, sqlText);
          // A PRAGMA answers a row; BEGIN, COMMIT and ROLLBACK none.
          return statement.reader ? statement.get() : statement.run();
        });
      control(`PRAGMA busy_timeout = ${BEGIN_BUSY_TIMEOUT_MS}`);
      try {
        control('BEGIN IMMEDIATE');
      } catch {
        // The lock stayed taken (or the connection failed): the ordinary path waits for it.
        return undefined;
      } finally {
        control(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      }
      const tx: SyncWrite = {
        all(sqlText, params) {
          const { statement, rowOf } = keep(keptOn(readers, database), sqlText, () =>
            sqliteRowReader(database, sqlText),
          );
          const values: unknown[] = params.map(stored);
          const rows = timed(sqlText, () => statement.all(...values)) as unknown[][];
          return rows.map(rowOf);
        },
        run(sqlText, params) {
          const { changes, lastInsertRowid } = timed(sqlText, () =>
            statementOf(database, sqlText).run(...params.map(stored)),
          );
          return { changes, lastInsertRowid: Number(lastInsertRowid) };
        },
      };
      let result: ReturnType<typeof work>;
      try {
        result = work(tx);
      } catch {
        // The ordinary path makes the same write again and reports its failure as every write does.
        result = DECLINED;
      }
      if (result === DECLINED) {
        if (database.inTransaction) control('ROLLBACK');
        return undefined;
      }
      try {
        control('COMMIT');
      } catch {
        if (database.inTransaction) control('ROLLBACK');
        return undefined;
      }
      return result;
    },
  };
}
