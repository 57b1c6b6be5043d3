import { empty, join, raw, type Sql, sqltag } from '@prisma/client/runtime/client';

/*
 * Tagged SQL fragments for raw queries. Values interpolated with `sql` are always bound as
 * parameters; the client renders the placeholders of its own provider, so one fragment serves
 * SQLite and PostgreSQL. Identifiers come only from fixed catalogues (never from input) and are
 * double-quoted, which both databases accept.
 */
export type { Sql };
// Prisma's runtime, which every provider's client uses: no provider's client is loaded for these.
export const sql = sqltag;
export const joinSql = join;
export const emptySql = empty;

/**
 * A value as Prisma's SQLite adapter binds it (booleans as 0/1, dates as epoch milliseconds), for
 * statements of `sql` run through better-sqlite3 directly.
 */
export function sqliteBindable(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.getTime();
  return value;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A quoted identifier. Throws on anything that is not a plain name: callers pass catalogue names only. */
export function identifier(name: string): Sql {
  if (!IDENTIFIER.test(name)) throw new Error(`not a plain identifier: ${name}`);
  return raw(`"${name}"`);
}

const KEYWORDS = new Set([
  '=',
  '<>',
  '>',
  '>=',
  '<',
  '<=',
  'ASC',
  'DESC',
  'ASC NULLS FIRST',
  'DESC NULLS LAST',
]);

/** A fixed SQL keyword or operator from a closed list. */
export function keyword(text: string): Sql {
  if (!KEYWORDS.has(text)) throw new Error(`not an allowed SQL keyword: ${text}`);
  return raw(text);
}
