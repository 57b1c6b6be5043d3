/*
 * What the sandbox's rules (src/domain/stl/sql) ask of the database that runs a query: the data
 * layer's sandboxes (./index.ts) implement it, and the domain drives them through it without
 * knowing which database it is. An executor owns the database wall (read-only connection or transaction, the
 * restricted role on PostgreSQL, the bytecode check on SQLite) and enforces the limits it is given;
 * it reports how a query ended instead of throwing, so that the domain words every refusal.
 */

export type SqlDialect = 'sqlite' | 'postgresql';

export interface ExecuteOptions {
  /** Rows read at most: the cursor stops there. Undefined only when the limits wall is off (tests). */
  maxRows: number | undefined;
  /** Time allowed to run, in milliseconds. Undefined only when the limits wall is off (tests). */
  timeoutMs: number | undefined;
  /**
   * Size of the answer at most, in bytes of its values' text, counted while the rows are read and
   * before they reach the service. Undefined only when the limits wall is off (tests).
   */
  maxBytes: number | undefined;
  /** Who asks (a key, an administrator, a user): each caller's share of the sandbox is bounded. */
  caller: string;
  /** The database wall; false only in tests that prove another wall alone. */
  databaseWall: boolean;
}

/** A row as the driver gave it: columns in order, with the names the database reported. */
export interface RawResult {
  columns: string[];
  rows: unknown[][];
}

export type ExecuteOutcome =
  | { status: 'ok'; result: RawResult }
  /** The time limit passed; the query was stopped. */
  | { status: 'timeout' }
  /** The answer grew past its size cap; the query was stopped. */
  | { status: 'too-large' }
  /** The database wall refused the statement (a private relation, a write, a forbidden operation). */
  | { status: 'refused'; reason: string }
  /** The database rejected the statement (syntax, unknown column ...); `reason` is its short message. */
  | { status: 'failed'; reason: string };

/**
 * Runs a statement behind the database wall. Throws SandboxBusy (a 429) when the caller's share or
 * the sandbox's queue is full, SandboxUnavailable when the database cannot be reached.
 */
export interface SqlExecutor {
  readonly dialect: SqlDialect;
  execute(sql: string, options: ExecuteOptions): Promise<ExecuteOutcome>;
}
