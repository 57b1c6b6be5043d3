import { identifier, joinSql, sql } from '../../db/sql.ts';
import { chunks } from './fields.ts';
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
  for (const slice of chunks(rows, Math.floor(MAX_PARAMETERS / columns.length))) {
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
