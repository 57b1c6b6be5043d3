import { createHash } from 'node:crypto';
import type { Db, DbHandle } from '../../db/client.ts';
import type { CostlyReads } from '../../db/costlyReads.ts';
import { identifier, joinSql, keyword, type Sql, sql } from '../../db/sql.ts';
import type { OrderKey } from './query.ts';

/*
 * Exact totals of list filters that ContentTally cannot sum (flags, title patterns, groups, ...),
 * kept in the database so that every node shares them. Database triggers advance a site's
 * ContentGeneration inside every transaction that writes the site's contents or channels, whoever
 * writes (the service, an import, the CLI, plain SQL from another process). A total is stored with
 * the generation it was counted at, both read in one statement (one snapshot), and used only while
 * the site's generation is still that one: after any write the filter is counted afresh. So a total
 * is never stale, and a repeated deep page of a costly filter costs one key look-up instead of a
 * count over every match.
 */

/** Slots per site: the table holds at most this many totals per site, whatever filters are asked. */
export const COUNT_SLOTS = 1024;

interface CountKey {
  slot: number;
  key: string;
}

/** A statement's parameters with their types, for a key: 1 and '1' differ, a date is its instant. */
export function typedValues(statement: Sql): unknown[] {
  return statement.values.map((value: unknown) =>
    value instanceof Date ? ['date', value.toISOString()] : [typeof value, value],
  );
}

/** A filter's key: the hash of its SQL text and parameters (typed, so 1 and '1' differ). */
export function countKey(provider: string, matchWhere: Sql): CountKey {
  const digest = createHash('sha256')
    .update(JSON.stringify([provider, matchWhere.sql, typedValues(matchWhere)]))
    .digest();
  return { slot: digest.readUInt32BE(0) % COUNT_SLOTS, key: digest.toString('hex') };
}

/** A site's content generation (0 before its first write); `siteId` a number or a column. */
export const currentGeneration = (siteId: number | Sql) =>
  sql`COALESCE((SELECT g."generation" FROM "ContentGeneration" g WHERE g."siteId" = ${siteId}), 0)`;

/** The count of `SELECT COUNT(*) FROM "Content" <where>`, counted now and not stored. */
export async function countMatches(costly: CostlyReads, where: Sql): Promise<number> {
  const [counted] = await costly.all<{ total: number | bigint }>(
    sql`SELECT COUNT(*) AS "total" FROM "Content" ${where}`,
  );
  return Number(counted?.total ?? 0);
}

/**
 * The count of `SELECT COUNT(*) FROM "Content" <matchWhere>` (`where` is the same filter as the
 * statement runs it: with SQLite's time limit), from the stored total when the site has not been
 * written since it was counted, else counted now and stored.
 */
export async function cachedCount(
  { db, provider, costly }: Pick<DbHandle, 'db' | 'provider' | 'costly'>,
  siteId: number,
  where: Sql,
  matchWhere: Sql,
): Promise<number> {
  const { slot, key } = countKey(provider, matchWhere);
  const [stored] = await db.$queryRaw<{ count: number | bigint }[]>(
    sql`SELECT "count" FROM "ContentCount" WHERE "siteId" = ${siteId} AND "slot" = ${slot} AND "key" = ${key}
      AND "generation" = ${currentGeneration(siteId)}`,
  );
  if (stored) return Number(stored.count);

  // The generation and the count in one statement: both from the same snapshot.
  const [counted] = await costly.all<{ generation: number | bigint; total: number | bigint }>(
    sql`SELECT ${currentGeneration(siteId)} AS "generation", (SELECT COUNT(*) FROM "Content" ${where}) AS "total"`,
  );
  const generation = BigInt(counted?.generation ?? 0);
  const total = Number(counted?.total ?? 0);
  await storeCount(db, siteId, { slot, key }, generation, total, '');
  return total;
}

/**
 * Files a total (and its marks, '' for none) in its slot. A newer entry in the slot is kept (a
 * slower request that counted an older generation loses); an older one is replaced whole, marks
 * included.
 */
async function storeCount(
  db: Db,
  siteId: number,
  { slot, key }: CountKey,
  generation: bigint,
  count: number,
  marks: string,
): Promise<void> {
  await db.$executeRaw(
    sql`INSERT INTO "ContentCount" ("siteId", "slot", "key", "generation", "count", "marks")
      VALUES (${siteId}, ${slot}, ${key}, ${generation}, ${count}, ${marks})
      ON CONFLICT ("siteId", "slot") DO UPDATE SET "key" = excluded."key", "generation" = excluded."generation",
        "count" = excluded."count", "marks" = excluded."marks"
      WHERE excluded."generation" >= "ContentCount"."generation"`,
  );
}

/*
 * Page marks (keyset skipping) for deep pages of such filters. Even with its ids picked from index
 * entries, page 200 of a filter must find and order every match before it can skip 5,970 of them,
 * and a title pattern must be tested on each candidate (on PostgreSQL, by reading its row). The
 * first deep page after a write orders the matches once — in the pass that counts them, which such
 * a filter pays anyway — and stores the sort keys of every MARK_EVERY-th match with the total. A
 * later page starts after the mark before it and stops at the mark after it: it reads the
 * candidates of ~MARK_EVERY matches instead of all. The page query checks in the same statement
 * (one snapshot) that the site's generation is still the marks' one, so a page is never read
 * against marks of other data; if a write came in between, the page is read without marks.
 */

export const MARK_EVERY = 500;

export interface PageMarks {
  generation: bigint;
  count: number;
  /** marks[i]: the order keys of match number (i + 1) * MARK_EVERY (1-based). */
  marks: unknown[][];
}

type Value = number | boolean | string;
const plainValue = (value: unknown): Value => (typeof value === 'bigint' ? Number(value) : (value as Value));

/** The total and the marks of a filter in an order, stored or made (and stored). */
export async function pageMarks(
  { db, provider, costly }: Pick<DbHandle, 'db' | 'provider' | 'costly'>,
  siteId: number,
  where: Sql,
  matchWhere: Sql,
  orderBy: Sql,
  keys: readonly OrderKey[],
): Promise<PageMarks | undefined> {
  const { slot, key } = countKey(provider, sql`${matchWhere} ${orderBy}`);
  const [stored] = await db.$queryRaw<
    { count: number | bigint; marks: string; generation: number | bigint }[]
  >(
    sql`SELECT "count", "marks", "generation" FROM "ContentCount" WHERE "siteId" = ${siteId} AND "slot" = ${slot}
      AND "key" = ${key} AND "marks" <> '' AND "generation" = ${currentGeneration(siteId)}`,
  );
  if (stored)
    return {
      generation: BigInt(stored.generation),
      count: Number(stored.count),
      marks: JSON.parse(stored.marks) as unknown[][],
    };

  // One pass: the generation, the total and the marks from one snapshot (the first row carries the
  // total even when there are fewer matches than one mark).
  const columns = keys.map((orderKey, index) => sql`${orderKey.column} AS ${identifier(`k${index}`)}`);
  const rows = await costly.all<Record<string, unknown>>(
    sql`SELECT ${currentGeneration(siteId)} AS "generation", m.* FROM (
      SELECT COUNT(*) OVER () AS "total", ROW_NUMBER() OVER (${orderBy}) AS "n", ${joinSql(columns)}
      FROM "Content" ${where}) AS m
      WHERE m."n" % ${MARK_EVERY} = 0 OR m."n" = 1 ORDER BY m."n"`,
  );
  const first = rows[0];
  if (!first) return undefined;
  const generation = BigInt(first.generation as number | bigint);
  const count = Number(first.total);
  const marks = rows
    .filter((row) => Number(row.n) % MARK_EVERY === 0)
    .map((row) => keys.map((_, index) => plainValue(row[`k${index}`])));
  await storeCount(db, siteId, { slot, key }, generation, count, JSON.stringify(marks));
  return { generation, count, marks };
}

/** Rows that sort after the row whose order keys are `mark` (keys hold no NULL). */
function after(keys: readonly OrderKey[], mark: readonly unknown[]): Sql {
  const branches = keys.map((orderKey, index) => {
    const ties = keys.slice(0, index).map((tied, j) => sql`${tied.column} = ${mark[j]}`);
    const beyond = sql`${orderKey.column} ${keyword(orderKey.desc ? '<' : '>')} ${mark[index]}`;
    return sql`(${joinSql([...ties, beyond], ' AND ')})`;
  });
  return sql`(${joinSql(branches, ' OR ')})`;
}

/**
 * The extra conditions of the page at `offset` (0-based) of `perPage` rows, and the offset that
 * remains within them; undefined when no mark precedes the page.
 */
export function markedWindow(
  keys: readonly OrderKey[],
  { marks, generation }: PageMarks,
  siteId: number,
  offset: number,
  perPage: number,
): { conditions: Sql; offset: number } | undefined {
  const block = Math.floor(offset / MARK_EVERY);
  const lower = marks[block - 1];
  if (!lower) return undefined;
  const [first] = keys as [OrderKey];
  const bound = (mark: readonly unknown[], upper: boolean) =>
    // The first key's range alone, redundant with the keyset test, is what an index can seek on.
    sql`${first.column} ${keyword(first.desc !== upper ? '<=' : '>=')} ${mark[0]}`;
  const parts = [sql`${currentGeneration(siteId)} = ${generation}`, bound(lower, false), after(keys, lower)];
  const upper = marks[Math.ceil((offset + perPage) / MARK_EVERY) - 1];
  if (upper) parts.push(bound(upper, true), sql`NOT ${after(keys, upper)}`);
  return { conditions: joinSql(parts, ' AND '), offset: offset - block * MARK_EVERY };
}
