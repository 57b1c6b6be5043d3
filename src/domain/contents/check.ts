import type { Db } from '../../db/client.ts';
import type { ContentCheck as ContentCheckRow } from '../../db/models.ts';
import { joinSql, sql } from '../../db/sql.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { formatDateTime } from '../dates.ts';
import { assertNoProblems, type FieldProblem, forbidden, notFound } from '../errors.ts';
import { actorOf } from '../events/actor.ts';
import { recordEvents } from '../events/record.ts';
import type { Principal } from '../principal.ts';
import { requireContent, requireSite } from '../records.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import { approvedLevel, rejectedLevel, storedCheckedLevel } from './review.ts';

/** 9 parameters each: far below SQLite's and PostgreSQL's limits per statement. */
const CHECKS_PER_STATEMENT = 1000;

export type CheckContentsRequest = components['schemas']['CheckContentsRequest'];
export type ContentCheck = components['schemas']['ContentCheck'];

export function toContentCheck(row: ContentCheckRow): ContentCheck {
  return {
    id: row.id,
    siteId: row.siteId,
    channelId: row.channelId,
    contentId: row.contentId,
    adminId: row.adminId,
    apiKeyId: row.apiKeyId,
    checked: row.checked,
    checkedLevel: storedCheckedLevel(row.checkedLevel),
    reasons: row.reasons,
    checkDate: formatDateTime(row.checkDate),
  };
}

/** Who a decision is recorded under; a user (member) never reviews contents. */
export function reviewerOf(principal: Principal): { adminId: number; apiKeyId: number } {
  if (principal.kind === 'administrator') return { adminId: principal.administratorId, apiKeyId: 0 };
  if (principal.kind === 'apiKey') return { adminId: 0, apiKeyId: principal.apiKeyId };
  throw forbidden("A user's access token cannot change contents");
}

/**
 * Approve or reject contents of a site, all or none: the contents' new review state and one
 * decision record each are written in one transaction, which reads the contents first, so each level
 * follows from the state the content has when the decision is written.
 */
export async function checkContents(
  db: Db,
  request: CheckContentsRequest,
  principal: Principal,
): Promise<ContentCheck[]> {
  const reviewer = reviewerOf(principal);
  const actor = actorOf(principal);
  const site = await requireSite(db, request.siteId);
  const siteLevel = readSiteAttributes(site.attributes).checkContentLevel;
  const approve = request.checked ?? true;
  const problems: FieldProblem[] = [];
  if (request.checkedLevel !== undefined && !approve)
    problems.push({ field: 'checkedLevel', message: 'only goes with an approval (checked true)' });
  else if (request.checkedLevel !== undefined && request.checkedLevel > siteLevel)
    problems.push({
      field: 'checkedLevel',
      message: `must be at most the site's checkContentLevel (${siteLevel})`,
    });
  const seen = new Set<number>();
  request.contents.forEach(({ id }, index) => {
    if (seen.has(id)) problems.push({ field: `contents/${index}`, message: `names content ${id} again` });
    seen.add(id);
  });
  assertNoProblems(problems);
  const stage = request.checkedLevel ?? siteLevel;
  const ids = [...seen];
  const now = new Date();

  return writeTransaction(db, async (tx) => {
    const rows = await tx.content.findMany({
      where: { siteId: request.siteId, recycled: false, id: { in: ids } },
      select: { id: true, channelId: true, checkedLevel: true },
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    const levels = new Map<number, number[]>();
    const records = request.contents.map(({ channelId, id }) => {
      const row = byId.get(id);
      if (row?.channelId !== channelId) {
        throw notFound(`Content ${id} does not exist in channel ${channelId} of site ${request.siteId}`);
      }
      const level = approve
        ? approvedLevel(row.checkedLevel, stage)
        : rejectedLevel(row.checkedLevel, siteLevel);
      const same = levels.get(level);
      if (same) same.push(id);
      else levels.set(level, [id]);
      return {
        siteId: request.siteId,
        channelId,
        contentId: id,
        ...reviewer,
        checked: approve,
        checkedLevel: level,
        reasons: request.reasons ?? '',
        checkDate: now,
      };
    });
    // One statement per resulting level (at most a handful), whatever the number of contents.
    for (const [level, contentIds] of levels) {
      await tx.content.updateMany({
        where: { id: { in: contentIds } },
        data: {
          checkedLevel: level,
          checked: level >= siteLevel,
          lastModifiedDate: now,
          version: { increment: 1 },
        },
      });
    }
    // Raw multi-row INSERTs, as for the events: only the ids come back, the rest is what was written.
    const written: ContentCheckRow[] = [];
    for (let start = 0; start < records.length; start += CHECKS_PER_STATEMENT) {
      const slice = records.slice(start, start + CHECKS_PER_STATEMENT);
      const ids = await tx.$queryRaw<{ id: number | bigint; contentId: number | bigint }[]>(
        sql`INSERT INTO "ContentCheck" ("siteId", "channelId", "contentId", "adminId", "apiKeyId", "checked", "checkedLevel", "reasons", "checkDate") VALUES ${joinSql(
          slice.map(
            (record) =>
              sql`(${record.siteId}, ${record.channelId}, ${record.contentId}, ${record.adminId}, ${record.apiKeyId}, ${record.checked}, ${record.checkedLevel}, ${record.reasons}, ${record.checkDate})`,
          ),
        )} RETURNING "id", "contentId"`,
      );
      // RETURNING's order is not the order of VALUES (SQLite says so): matched by content, each once.
      const idOf = new Map(ids.map((row) => [Number(row.contentId), Number(row.id)]));
      for (const record of slice) written.push({ ...record, id: idOf.get(record.contentId) as number });
    }
    // One event per content decided, each with the level it now has, in the order asked.
    await recordEvents(
      tx,
      records.map((record) => ({
        actor,
        type: 'content.checked',
        resourceId: record.contentId,
        siteId: record.siteId,
        channelId: record.channelId,
        payload: { checked: record.checked, checkedLevel: record.checkedLevel, reasons: record.reasons },
      })),
    );
    const byContent = new Map(written.map((row) => [row.contentId, row]));
    return request.contents.map(({ id }) => toContentCheck(byContent.get(id) as ContentCheckRow));
  });
}

/** A content's decisions, newest first (404 as for get content). */
export async function listContentChecks(
  db: Db,
  target: { siteId: number; channelId: number; id: number },
): Promise<ContentCheck[]> {
  await requireContent(db, target.siteId, target.channelId, target.id);
  const rows = await db.contentCheck.findMany({
    where: { siteId: target.siteId, contentId: target.id },
    orderBy: { id: 'desc' },
  });
  return rows.map(toContentCheck);
}
