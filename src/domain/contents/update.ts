import type { Db, DbHandle } from '../../db/client.ts';
import { type Content, MODEL_FIELDS } from '../../db/models.ts';
import { DECLINED, type PointWrites, type SyncWrite } from '../../db/pointWrites.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { resolveAlias } from '../aliases.ts';
import { parseDateTime } from '../dates.ts';
import { assertNoProblems, type FieldProblem, notFound } from '../errors.ts';
import type { Actor } from '../events/actor.ts';
import { eventInsertFrom, placeOf, recordEvent, recordEventIn } from '../events/record.ts';
import { joinList } from '../lists.ts';
import { requireSite } from '../records.ts';
import { urlProblem } from '../safeText.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import { type Precondition, refuseUnlessMissing, versionFilter } from '../versions.ts';
import { type ContentFormA, toContentFormA } from './forms.ts';
import { postgresParams, rowsUnlessRefused, unlessRefused } from './postgresWrites.ts';
import { requestedReviewState } from './review.ts';

export type UpdateContentRequest = components['schemas']['UpdateContentRequest'];

const TEXT_FIELDS = [
  'addUserName',
  'lastEditUserName',
  'writingUserName',
  'title',
  'subTitle',
  'summary',
  'author',
  'source',
  'linkType',
] as const;
/** URL-valued fields, each under the one URL rule (src/domain/safeText.ts). */
const URL_FIELDS = ['imageUrl', 'videoUrl', 'fileUrl'] as const;
const INTEGER_FIELDS = ['taxis', 'sourceId', 'referenceId', 'templateId'] as const;
const COUNT_FIELDS = ['hits', 'hitsByDay', 'hitsByWeek', 'hitsByMonth'] as const;
const FLAG_FIELDS = ['top', 'recommend', 'hot', 'color'] as const;
const DATE_FIELDS = ['addDate', 'lastEditDate', 'lastHitsDate'] as const;

/**
 * Every field of the update body this module reads (the lists above and the fields handled one by
 * one below). The contract describes each other field as ignored; test/domain/recordFields checks
 * that together they are the body's fields, so a new update field cannot go unhandled.
 */
export const HANDLED_UPDATE_FIELDS = [
  ...TEXT_FIELDS,
  ...URL_FIELDS,
  ...INTEGER_FIELDS,
  ...COUNT_FIELDS,
  ...FLAG_FIELDS,
  ...DATE_FIELDS,
  'body',
  'content',
  'linkUrl',
  'groupNames',
  'tagNames',
  'isChecked',
  'checked',
  'checkedLevel',
] as const satisfies readonly (keyof UpdateContentRequest)[];

function approvalWord(
  value: string | boolean | undefined,
  field: string,
  problems: FieldProblem[],
): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  const word = value.trim().toLowerCase();
  if (word === 'true') return true;
  if (word === 'false') return false;
  problems.push({ field, message: "must be 'true' or 'false'" });
  return undefined;
}

/**
 * The column changes a partial update asks for; fields it does not name stay as they are. A create
 * (src/domain/contents/create.ts) reads its body with the same rules.
 */
export function contentChanges(body: UpdateContentRequest, siteLevel: number): Partial<Content> {
  const problems: FieldProblem[] = [];
  const changes: Partial<Content> = {};
  const set = <K extends keyof Content>(key: K, value: Content[K]) => {
    changes[key] = value;
  };

  for (const field of TEXT_FIELDS) if (body[field] !== undefined) set(field, body[field]);
  if (changes.title !== undefined && changes.title.trim() === '')
    problems.push({ field: 'title', message: 'must not be empty' });
  const text = resolveAlias(
    { field: 'body', value: body.body },
    { field: 'content', value: body.content },
    problems,
  );
  if (text !== undefined) set('body', text);
  for (const field of URL_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    const problem = urlProblem(value);
    if (problem) problems.push({ field, message: problem });
    else set(field, value);
  }
  if (body.linkUrl !== undefined) {
    const problem = body.linkUrl === null ? undefined : urlProblem(body.linkUrl, 'link');
    if (problem) problems.push({ field: 'linkUrl', message: problem });
    else set('linkUrl', body.linkUrl);
  }
  for (const field of INTEGER_FIELDS) if (body[field] !== undefined) set(field, body[field]);
  for (const field of COUNT_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    if (value < 0) problems.push({ field, message: 'must not be negative' });
    else set(field, value);
  }
  for (const field of FLAG_FIELDS) if (body[field] !== undefined) set(field, body[field]);
  for (const field of DATE_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    const date = parseDateTime(value);
    if (date) set(field, date);
    else problems.push({ field, message: `'${value}' is not a valid date-time` });
  }
  if (body.groupNames !== undefined) set('groupNames', joinList(body.groupNames));
  if (body.tagNames !== undefined) set('tagNames', joinList(body.tagNames));

  const isChecked = approvalWord(body.isChecked, 'isChecked', problems);
  if (isChecked !== undefined && body.checked !== undefined && isChecked !== body.checked)
    problems.push({ field: 'checked', message: 'contradicts isChecked' });
  assertNoProblems(problems);

  const review = requestedReviewState(
    { checkedLevel: body.checkedLevel, approved: isChecked ?? body.checked },
    siteLevel,
  );
  if (review) Object.assign(changes, review);
  return changes;
}

/**
 * Apply a partial update and return the record as it now is. Review state follows the site's
 * checkContentLevel; lastModifiedDate is always set, lastEditDate too unless the request gives one.
 * With a precondition (If-Match) the UPDATE itself requires the version, so a stale one writes
 * nothing and answers 412.
 */
export async function updateContent(
  { db, writes }: Pick<DbHandle, 'db' | 'writes'>,
  target: { siteId: number; channelId: number; id: number },
  body: UpdateContentRequest,
  actor: Actor,
  precondition?: Precondition,
): Promise<{ content: ContentFormA; version: number }> {
  const fast = writes.transaction((tx) => updateNow(tx, target, body, actor, precondition));
  if (fast !== undefined) return fast;
  if (writes.statement !== undefined) {
    const done = await updateInOneStatement(writes.statement, db, target, body, actor, precondition);
    if (done !== undefined) return done;
  }
  const site = await requireSite(db, target.siteId);
  const changes = contentChanges(body, readSiteAttributes(site.attributes).checkContentLevel);
  const now = new Date();
  const where = { id: target.id, siteId: target.siteId, channelId: target.channelId, recycled: false };
  const updated = await writeTransaction(db, async (tx) => {
    const { count } = await tx.content.updateMany({
      where: { ...where, ...versionFilter(precondition) },
      data: { ...updatedColumns(changes, now), version: { increment: 1 } },
    });
    if (count === 0)
      return refuseUnlessMissing(`Content ${target.id}`, precondition, () =>
        tx.content.findFirst({ where, select: { version: true } }),
      );
    await recordEvent(tx, updatedEvent(target, changes, actor));
    return tx.content.findUnique({ where: { id: target.id } });
  });
  if (!updated) {
    throw notFound(
      `Content ${target.id} does not exist in channel ${target.channelId} of site ${target.siteId}`,
    );
  }
  return { content: toContentFormA(updated), version: updated.version };
}

/** A content's columns, as the model lists them (what Prisma returns for the row). */
export const CONTENT_COLUMNS = MODEL_FIELDS.Content.map((field) => `"${field}"`).join(', ');
export const CONTENT_BY_ID = `SELECT ${CONTENT_COLUMNS} FROM "Content" WHERE "id" = ?`;

/** What every way of updating a content writes besides the body's changes: the dates it moves. */
const updatedColumns = (changes: Partial<Content>, now: Date): Partial<Content> => ({
  ...changes,
  lastModifiedDate: now,
  lastEditDate: changes.lastEditDate ?? now,
});

const updatedEvent = (
  target: { siteId: number; channelId: number; id: number },
  changes: Partial<Content>,
  actor: Actor,
) => ({
  actor,
  type: 'content.updated' as const,
  resourceId: target.id,
  ...placeOf(target),
  payload: changes,
});

/** What a write needs of its site. */
export const SITE_ATTRIBUTES = 'SELECT "attributes" FROM "Site" WHERE "id" = ?';

/**
 * updateContent's write as one synchronous transaction of the point writes (src/db/pointWrites.ts):
 * the same statements, the same event. Declines (nothing written) where the ordinary path has an
 * answer to give instead: no such site, or no row the UPDATE matched (missing, or a stale version).
 */
function updateNow(
  tx: SyncWrite,
  target: { siteId: number; channelId: number; id: number },
  body: UpdateContentRequest,
  actor: Actor,
  precondition: Precondition | undefined,
): { content: ContentFormA; version: number } | typeof DECLINED {
  const site = tx.all(SITE_ATTRIBUTES, [target.siteId])[0];
  if (site === undefined) return DECLINED;
  const changes = contentChanges(body, readSiteAttributes(String(site.attributes)).checkContentLevel);
  const set = updatedColumns(changes, new Date());
  // The names are the model's columns (contentChanges sets no other): never client text.
  const columns = Object.keys(set) as (keyof Content)[];
  const versions = precondition?.kind === 'versions' ? precondition.versions : [];
  const { changes: count } = tx.run(
    `UPDATE "Content" SET ${columns.map((column) => `"${column}" = ?`).join(', ')}, "version" = "version" + 1
      WHERE "id" = ? AND "siteId" = ? AND "channelId" = ? AND "recycled" = 0${
        precondition?.kind === 'versions' ? ` AND "version" IN (${versions.map(() => '?').join(', ')})` : ''
      }`,
    [...columns.map((column) => set[column]), target.id, target.siteId, target.channelId, ...versions],
  );
  if (count === 0) return DECLINED;
  recordEventIn(tx, updatedEvent(target, changes, actor));
  const row = tx.all(CONTENT_BY_ID, [target.id])[0] as Content;
  return { content: toContentFormA(row), version: row.version };
}

/**
 * updateContent's write on PostgreSQL in one statement (atomic by itself; the row's lock is held to
 * its commit, as in the transaction): the UPDATE returning the row, the event inserted from it.
 * One round trip where the transaction takes six (two for a body that sets a review state).
 * Undefined (nothing written) when no row matched, the body is refused or PostgreSQL refused the
 * statement: the ordinary path then gives its answer.
 */
async function updateInOneStatement(
  statement: NonNullable<PointWrites['statement']>,
  db: Db,
  target: { siteId: number; channelId: number; id: number },
  body: UpdateContentRequest,
  actor: Actor,
  precondition: Precondition | undefined,
): Promise<{ content: ContentFormA; version: number } | undefined> {
  // The site's review levels matter only to a body that sets a review state: otherwise the update
  // is the one round trip (contentChanges reads the level only for a review field).
  const setsReview =
    body.checkedLevel !== undefined || body.checked !== undefined || body.isChecked !== undefined;
  let siteLevel = 1;
  if (setsReview) {
    const site = await db.site.findUnique({ where: { id: target.siteId }, select: { attributes: true } });
    if (site === null) return undefined;
    siteLevel = readSiteAttributes(site.attributes).checkContentLevel;
  }
  const changes = unlessRefused(() => contentChanges(body, siteLevel));
  if (changes === undefined) return undefined;
  const set = updatedColumns(changes, new Date());
  const { params, bind } = postgresParams();
  // The names are the model's columns (contentChanges sets no other): never client text.
  const sets = Object.entries(set).map(([column, value]) => `"${column}" = ${bind(value)}`);
  const versions =
    precondition?.kind === 'versions' ? ` AND "version" = ANY(${bind(precondition.versions)}::int[])` : '';
  const sqlText = `WITH "updated" AS (
      UPDATE "Content" SET ${sets.join(', ')}, "version" = "version" + 1
      WHERE "id" = ${bind(target.id)} AND "siteId" = ${bind(target.siteId)} AND "channelId" = ${bind(target.channelId)}
        AND NOT "recycled"${versions} RETURNING ${CONTENT_COLUMNS}
    ), "event" AS (${eventInsertFrom('"updated"', updatedEvent(target, changes, actor), bind)})
    SELECT * FROM "updated"`;
  const row = (await rowsUnlessRefused(statement, sqlText, params))?.[0] as Content | undefined;
  return row === undefined ? undefined : { content: toContentFormA(row), version: row.version };
}
