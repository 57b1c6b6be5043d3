import type { Db, DbHandle } from '../../db/client.ts';
import { sql } from '../../db/sql.ts';
import { notFound } from '../errors.ts';

/*
 * The anonymous hit counter a content's page calls (docs/api/contents.md, "Hit counter"). One
 * statement per hit, no read before it and no transaction around it: the statement is atomic on
 * its own, so concurrent hits are all counted, and the roll-over of the day, week and month
 * counters is decided inside it from the row's own lastHitsDate. The periods are the service's
 * time zone's (TZ): their starts are worked out here and compared in the database.
 *
 * A hit is not an event (no event row, no webhook): at page-view rates it would flood the outbox
 * and the activity log with records no one reviews; hits stay readable on the content itself.
 * It does bump the row's version: `hits` is part of the content's representation, so its strong
 * ETag must change with it (docs/api/conditional-writes.md). It does not advance the site's
 * generation, which would void every stored total and page mark of the site at page-view rates:
 * a list that reads the hit columns never uses them (query.ts, `readsHitCounters`). SQLite's
 * trigger watches every other column; PostgreSQL's reads a mark the statement sets for its own
 * transaction (migration hits_keep_site_generation).
 */

export interface HitTarget {
  siteId: number;
  channelId: number;
  contentId: number;
}

export interface HitPeriods {
  day: Date;
  week: Date;
  month: Date;
}

/** The starts of the day, the week (Monday, as ISO 8601) and the month holding `now`, in local time. */
export function periodStarts(now: Date): HitPeriods {
  const day = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  const sinceMonday = (day.getDay() + 6) % 7;
  return {
    day,
    week: new Date(now.getFullYear(), now.getMonth(), now.getDate() - sinceMonday),
    month: new Date(now.getFullYear(), now.getMonth(), 1),
  };
}

const where = ({ siteId, channelId, contentId }: HitTarget) =>
  sql`WHERE "id" = ${contentId} AND "siteId" = ${siteId} AND "channelId" = ${channelId}
    AND "checked" = ${true} AND "recycled" = ${false}`;

const missing = ({ siteId, channelId, contentId }: HitTarget) =>
  notFound(`No approved content ${contentId} in channel ${channelId} of site ${siteId}`);

/** Counts one hit on an approved content outside the recycle bin; answers its hits after it. */
export async function countHit(
  { db, provider }: Pick<DbHandle, 'db' | 'provider'>,
  target: HitTarget,
  now: Date = new Date(),
): Promise<number> {
  const { day, week, month } = periodStarts(now);
  const marked =
    provider === 'postgresql' ? sql`AND set_config('cms.counting_hits', 'on', true) = 'on'` : sql``;
  // A counter whose period began after the last hit (or that was never hit) restarts at 1. SET
  // reads the row as it was before the statement, on both databases.
  const [row] = await db.$queryRaw<{ hits: number | bigint }[]>(
    sql`UPDATE "Content" SET
      "hits" = "hits" + 1,
      "hitsByDay" = CASE WHEN "lastHitsDate" >= ${day} THEN "hitsByDay" + 1 ELSE 1 END,
      "hitsByWeek" = CASE WHEN "lastHitsDate" >= ${week} THEN "hitsByWeek" + 1 ELSE 1 END,
      "hitsByMonth" = CASE WHEN "lastHitsDate" >= ${month} THEN "hitsByMonth" + 1 ELSE 1 END,
      "lastHitsDate" = ${now},
      "version" = "version" + 1
    ${where(target)} ${marked} RETURNING "hits"`,
  );
  if (!row) throw missing(target);
  return Number(row.hits);
}

/** The hits of an approved content outside the recycle bin, without counting one. */
export async function readHits(db: Db, target: HitTarget): Promise<number> {
  const [row] = await db.$queryRaw<{ hits: number | bigint }[]>(
    sql`SELECT "hits" FROM "Content" ${where(target)}`,
  );
  if (!row) throw missing(target);
  return Number(row.hits);
}
