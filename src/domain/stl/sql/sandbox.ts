import type { ExecuteOptions, ExecuteOutcome, SqlExecutor } from '../../../db/sandbox/executor.ts';
import { SandboxBusy } from '../../../db/sandbox/gate.ts';
import { invalidFields, RateLimited } from '../../errors.ts';
import { checkWithParser } from './parserWall.ts';
import { normaliseRows, type SqlRow } from './rows.ts';

/** What runs a query behind the database wall: the handler's is its context's `sandbox`. */
export type { SqlExecutor };

/*
 * stl/sqlContents: a query reaches the database only when three independent walls agree
 * (docs/api/template-tags.md, "SQL sandbox"):
 *   1. the parser wall (parserWall.ts): one SELECT over the public views, allowed functions only;
 *   2. the database wall (the executor, src/db/sandbox): read-only connection or transaction, a role
 *      that may read the views only (PostgreSQL), a check of the tables the bytecode opens (SQLite);
 *   3. the limits wall: length of the text here; row cap, answer size cap and time limit enforced
 *      by the executor.
 * Each wall can be switched off, for tests only, to prove that each alone refuses what the others
 * would let through. Every refusal is a validation error on `queryString` naming the reason.
 */

export const MAX_QUERY_LENGTH = 10_000;

export interface SandboxLimits {
  maxRows: number;
  maxBytes: number;
  timeoutMs: number;
  maxLength: number;
}

export interface SandboxWalls {
  parser: boolean;
  database: boolean;
  limits: boolean;
}

const ALL_WALLS: SandboxWalls = { parser: true, database: true, limits: true };

const refuse = (message: string) => invalidFields([{ field: 'queryString', message }]);

export async function runSqlContents(
  executor: SqlExecutor,
  queryString: string,
  limits: SandboxLimits,
  caller: string,
  walls: SandboxWalls = ALL_WALLS,
): Promise<SqlRow[]> {
  if (walls.limits && queryString.length > limits.maxLength) {
    throw refuse(`is longer than ${limits.maxLength} characters`);
  }
  if (walls.parser) {
    const reason = checkWithParser(queryString, executor.dialect);
    if (reason !== undefined) throw refuse(reason);
  }
  // One statement: a final semicolon is dropped so that the executor may wrap the text.
  const sql = queryString.trim().replace(/;+$/, '');
  const outcome = await executeOrBusy(executor, sql, {
    maxRows: walls.limits ? limits.maxRows : undefined,
    maxBytes: walls.limits ? limits.maxBytes : undefined,
    timeoutMs: walls.limits ? limits.timeoutMs : undefined,
    databaseWall: walls.database,
    caller,
  });
  switch (outcome.status) {
    case 'ok':
      return normaliseRows(outcome.result);
    case 'timeout':
      throw refuse(`ran longer than the time limit of ${limits.timeoutMs} ms and was stopped`);
    case 'too-large':
      throw refuse(
        `answers more than ${limits.maxBytes} bytes and was stopped; select fewer columns or rows (LIMIT)`,
      );
    case 'refused':
      throw refuse(`was refused by the database: ${outcome.reason}`);
    case 'failed':
      throw refuse(`failed in the database: ${outcome.reason}`);
  }
}

/**
 * stl/sqlContent (the original's `stl:sqlContent` read as data): the first row of the query, or
 * null when it has none. The same walls as stl/sqlContents, with a cap of one row: the cursor stops
 * after it, so a query matching many rows costs no more than its first.
 */
export async function runSqlContent(
  executor: SqlExecutor,
  queryString: string,
  limits: SandboxLimits,
  caller: string,
): Promise<SqlRow | null> {
  const [row] = await runSqlContents(executor, queryString, { ...limits, maxRows: 1 }, caller);
  return row ?? null;
}

/** The executor's outcome; a busy sandbox is the client's 429 (RateLimited), with its Retry-After. */
async function executeOrBusy(
  executor: SqlExecutor,
  sql: string,
  options: ExecuteOptions,
): Promise<ExecuteOutcome> {
  try {
    return await executor.execute(sql, options);
  } catch (error) {
    if (error instanceof SandboxBusy) throw new RateLimited(error.message, error.retryAfterSeconds);
    throw error;
  }
}
