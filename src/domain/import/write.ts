import { identifier, joinSql, sql } from '../../db/sql.ts';
import type { Tx } from './state.ts';

/*
 * Bulk writes of an import. Multi-row INSERTs through the client's raw SQL are about ten times
 * faster than createMany here (10,000 contents: under a second against eight), and the driver
 * adapter binds dates and booleans exactly as the client's own writes do.
 */

/** Table names of the models (the schema has no @@map). */
export const MODEL_TABLES = {
  sites: 'Site',
  channels: 'Channel',
  contents: 'Content',
  users: 'User',
  administrators: 'Administrator',
  apiKeys: 'ApiKey',
} as const;

export type ModelTable = (typeof MODEL_TABLES)[keyof typeof MODEL_TABLES];

/** Bound parameters per statement stay below SQLite's limit (32766) and PostgreSQL's (65535). */
const MAX_PARAMETERS = 30_000;
/**
 * Characters of text per statement. The driver adapter's debug module keeps the arguments of its
 * last 100 calls (each query with all its values) even when debugging is off, so a statement's
 * size times 100 stays in memory (twice: the client keeps such a history too); this bound keeps
 * that small and independent of the import's size (docs/operating/cli.md).
 */
const MAX_STATEMENT_TEXT = 64 * 1024;

const textSize = (value: unknown) => (typeof value === 'string' ? value.length : 8);

/** Consecutive slices of rows, each within the parameter and the text bound (at least one row). */
function statements<T extends Readonly<Record<string, unknown>>>(
  rows: readonly T[],
  columns: readonly string[],
) {
  const slices: T[][] = [];
  let slice: T[] = [];
  let size = 0;
  for (const row of rows) {
    const rowSize = columns.reduce((sum, column) => sum + textSize(row[column]), 0);
    if (
      slice.length > 0 &&
      ((slice.length + 1) * columns.length > MAX_PARAMETERS || size + rowSize > MAX_STATEMENT_TEXT)
    ) {
      slices.push(slice);
      slice = [];
      size = 0;
    }
    slice.push(row);
    size += rowSize;
  }
  if (slice.length > 0) slices.push(slice);
  return slices;
}

/**
 * Inserts rows that all name the same columns with a value each (a column left out of every row
 * takes its database default, e.g. a content's `recycled`).
 */
export async function insertRows(
  tx: Tx,
  table: ModelTable,
  rows: readonly Readonly<Record<string, unknown>>[],
): Promise<void> {
  const first = rows[0];
  if (!first) return;
  const columns = Object.keys(first);
  for (const row of rows) {
    const keys = Object.keys(row);
    if (keys.length !== columns.length || columns.some((column) => row[column] === undefined)) {
      throw new Error(`import: rows for ${table} do not all have the columns ${columns.join(', ')}`);
    }
  }
  const columnList = joinSql(columns.map((column) => identifier(column)));
  for (const slice of statements(rows, columns)) {
    const values = slice.map((row) => sql`(${joinSql(columns.map((column) => row[column]))})`);
    await tx.$executeRaw(sql`INSERT INTO ${identifier(table)} (${columnList}) VALUES ${joinSql(values)}`);
  }
}

/**
 * PostgreSQL's id sequences do not notice explicit ids: move each past the highest id, or the next
 * insert without an id would collide. SQLite's AUTOINCREMENT keeps track by itself.
 */
export async function moveIdSequences(tx: Tx, tables: readonly ModelTable[]): Promise<void> {
  for (const table of tables) {
    const name = identifier(table);
    await tx.$queryRaw(
      sql`SELECT setval(pg_get_serial_sequence(${`"${table}"`}, 'id'), COALESCE((SELECT MAX(id) FROM ${name}), 0) + 1, false)`,
    );
  }
}
