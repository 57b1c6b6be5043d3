import { rowKey } from '../../../db/sandbox/catalog.ts';
import type { RawResult } from '../../../db/sandbox/executor.ts';

/*
 * Rows as the contract shows them, the same whatever the database: keys through rowKey (camelCase
 * view columns, other names in lower case), values strings, numbers, booleans or null. The views
 * already give dates as text and booleans as 'True'/'False'; this covers what a query computes.
 */

export type SqlValue = string | number | boolean | null;
export type SqlRow = Record<string, SqlValue>;

export function normaliseRows(result: RawResult): SqlRow[] {
  const keys = result.columns.map(rowKey);
  return result.rows.map((values) => {
    // Keys are the query's aliases: `__proto__` or `constructor` must be plain keys like any
    // other, so the row has no prototype and only its own keys count.
    const row: SqlRow = Object.create(null) as SqlRow;
    keys.forEach((key, index) => {
      // Two columns of one name (a join's two ids): the first wins, as in the original's readers.
      if (!Object.hasOwn(row, key)) row[key] = normaliseValue(values[index]);
    });
    return row;
  });
}

export function normaliseValue(value: unknown): SqlValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (value instanceof Date) return value.toISOString().slice(0, 19).replace('T', ' ');
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex').toUpperCase();
  return JSON.stringify(value);
}
