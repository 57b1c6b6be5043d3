import type { SqlExecutor } from '../../../db/sandbox/executor.ts';
import { sandboxFor } from '../../../db/sandbox/index.ts';
import { invalidFields } from '../../errors.ts';
import { checkWithParser } from './parserWall.ts';
import { normaliseRows, type SqlRow } from './rows.ts';

/*
 * stl/sqlContents: a query reaches the database only when three independent walls agree
 * (docs/api/template-tags.md, "SQL sandbox"):
 *   1. the parser wall (parserWall.ts): one SELECT over the public views, allowed functions only;
 *   2. the database wall (the executor, src/db/sandbox): read-only connection or transaction, a role
 *      that may read the views only (PostgreSQL), a check of the tables the bytecode opens (SQLite);
 *   3. the limits wall: length of the text here, row cap and time limit enforced by the executor.
 * Each wall can be switched off, for tests only, to prove that each alone refuses what the others
 * would let through. Every refusal is a validation error on `queryString` naming the reason.
 */

export const MAX_QUERY_LENGTH = 10_000;

export interface SandboxLimits {
  maxRows: number;
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
  const outcome = await executor.execute(sql, {
    maxRows: walls.limits ? limits.maxRows : undefined,
    timeoutMs: walls.limits ? limits.timeoutMs : undefined,
    databaseWall: walls.database,
  });
  switch (outcome.status) {
    case 'ok':
      return normaliseRows(outcome.result);
    case 'timeout':
      throw refuse(`ran longer than the time limit of ${limits.timeoutMs} ms and was stopped`);
    case 'refused':
      throw refuse(`was refused by the database: ${outcome.reason}`);
    case 'failed':
      throw refuse(`failed in the database: ${outcome.reason}`);
  }
}

/** stl/sqlContents on the service's own database, through its sandbox (src/db/sandbox). */
export function runSqlContentsOn(databaseUrl: string, queryString: string, limits: SandboxLimits) {
  return runSqlContents(sandboxFor(databaseUrl), queryString, limits);
}
