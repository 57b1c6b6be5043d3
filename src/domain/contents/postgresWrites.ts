import type { PointWrites } from '../../db/pointWrites.ts';
import { DomainError } from '../errors.ts';

/*
 * The pieces the contents' one-statement writes on PostgreSQL share (createContent's and
 * updateContent's): how a statement's parameters are bound, and how a refusal hands the answer
 * back to the ordinary path (a transaction), which gives it in its own order.
 */

/**
 * The parameters of one PostgreSQL statement: `bind` adds a value and answers its placeholder
 * (`$n`); a date is bound as UTC text (the columns are TIMESTAMP(3), in UTC).
 */
export function postgresParams() {
  const params: unknown[] = [];
  const bind = (value: unknown) => {
    params.push(value instanceof Date ? value.toISOString().replace('T', ' ').replace('Z', '') : value);
    return `$${params.length}`;
  };
  return { params, bind };
}

/**
 * Runs a statement of a write's PostgreSQL path: its rows, or undefined when PostgreSQL refused it
 * (the error has a SQLSTATE): nothing was written and the ordinary path gives its answer. Any other
 * failure (a connection lost) may come after the commit, so it is thrown, not tried again.
 */
export async function rowsUnlessRefused(
  statement: NonNullable<PointWrites['statement']>,
  sqlText: string,
  params: readonly unknown[],
): Promise<Record<string, unknown>[] | undefined> {
  try {
    return await statement(sqlText, params);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return undefined;
    throw error;
  }
}

/**
 * What `read` answers (a body's changes), or undefined when it refuses the body: a write's fast path
 * then leaves the answer to the ordinary path, in its order (an unknown site before a bad body).
 */
export function unlessRefused<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof DomainError) return undefined;
    throw error;
  }
}
