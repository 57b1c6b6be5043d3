import { randomUUID } from 'node:crypto';
import type { DbHandle } from '../../db/client.ts';
import type { Content } from '../../db/models.ts';
import { DECLINED, type PointWrites, type SyncWrite } from '../../db/pointWrites.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { invalidFields } from '../errors.ts';
import { type Actor, actorOf } from '../events/actor.ts';
import { eventInsertFrom, recordEvent, recordEventIn } from '../events/record.ts';
import type { Principal } from '../principal.ts';
import { requireChannel, requireSite } from '../records.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import { reviewerOf } from './check.ts';
import { type ContentFormA, toContentFormA } from './forms.ts';
import { postgresParams, rowsUnlessRefused, unlessRefused } from './postgresWrites.ts';
import { reviewStateOfLevel } from './review.ts';
import { CONTENT_BY_ID, CONTENT_COLUMNS, contentChanges, SITE_ATTRIBUTES } from './update.ts';

export type CreateContentRequest = components['schemas']['CreateContentRequest'];

/**
 * The original system keeps a channel's `top` contents at taxis 2,000,000,000 and above, the others
 * below, and gives a new content one more than the highest of its kind: the top of the channel.
 */
export const TOP_TAXIS_START = 2_000_000_000;

/** What a create writes from the body, whichever way it is written: the fields, the review state. */
function planOf(body: CreateContentRequest, siteLevel: number) {
  const { taxis: _ignored, ...changes } = contentChanges(body, siteLevel);
  const review = changes.checkedLevel === undefined ? reviewStateOfLevel(0, siteLevel) : {};
  return { changes, review, top: changes.top ?? false, now: new Date() };
}

/**
 * The new row but its order: the plan, and what the service sets (identity, dates). Its taxis is
 * one above the highest of its kind in the channel (nextTaxis, or the same rule in SQL).
 */
function newContentRow(
  { changes, review, now }: ReturnType<typeof planOf>,
  target: { siteId: number; channelId: number },
  adminId: number,
  addUserName: string,
) {
  return {
    ...changes,
    ...review,
    guid: randomUUID(),
    siteId: target.siteId,
    channelId: target.channelId,
    adminId,
    lastEditAdminId: adminId,
    addUserName,
    addDate: changes.addDate ?? now,
    lastEditDate: changes.lastEditDate ?? now,
    createdDate: now,
    lastModifiedDate: now,
  };
}

/** The lowest taxis of a kind (top or not): a new content's is above it and the kind's highest. */
const floorOf = (top: boolean) => (top ? TOP_TAXIS_START : 0);

/** A new content's taxis: one above the highest of its kind (top or not) in its channel. */
const nextTaxis = (top: boolean, highest: number | null | undefined) =>
  Math.max(highest ?? floorOf(top), floorOf(top)) + 1;

/** The event of a create, from the row written (the row planned, on PostgreSQL's one statement). */
const createdEvent = (
  row: Pick<Content, 'id' | 'siteId' | 'channelId'> &
    Partial<Pick<Content, 'title' | 'checked' | 'checkedLevel'>>,
  actor: Actor,
) => ({
  actor,
  type: 'content.created' as const,
  resourceId: row.id,
  siteId: row.siteId,
  channelId: row.channelId,
  payload: { title: row.title, checked: row.checked, checkedLevel: row.checkedLevel },
});

/**
 * Add a content to a channel and return it as form A. The body is read by the update's rules;
 * the service sets the identity, the order (taxis), the dates and who added it. The list's tallies,
 * labels and stored counts follow from the database's triggers inside the same transaction.
 */
export async function createContent(
  { db, writes }: Pick<DbHandle, 'db' | 'writes'>,
  target: { siteId: number; channelId: number },
  body: CreateContentRequest,
  principal: Principal,
): Promise<ContentFormA> {
  const { adminId } = reviewerOf(principal);
  const actor = actorOf(principal);
  const fast = writes.transaction((tx) => createNow(tx, target, body, adminId, actor));
  if (fast !== undefined) return fast;
  if (writes.statement !== undefined) {
    const done = await createInOneStatement(writes.statement, target, body, adminId, actor);
    if (done !== undefined) return done;
  }
  const site = await requireSite(db, target.siteId);
  await requireChannel(db, target.siteId, target.channelId);
  if (body.title.trim() === '') throw invalidFields([{ field: 'title', message: 'must not be empty' }]);
  const plan = planOf(body, readSiteAttributes(site.attributes).checkContentLevel);
  const { changes, top } = plan;

  const created = await writeTransaction(db, async (tx) => {
    const addUserName =
      changes.addUserName ??
      (adminId === 0
        ? ''
        : ((await tx.administrator.findUnique({ where: { id: adminId }, select: { userName: true } }))
            ?.userName ?? ''));
    const { _max } = await tx.content.aggregate({
      _max: { taxis: true },
      where: {
        siteId: target.siteId,
        recycled: false,
        channelId: target.channelId,
        taxis: top ? { gte: TOP_TAXIS_START } : { lt: TOP_TAXIS_START },
      },
    });
    const row = await tx.content.create({
      data: { ...newContentRow(plan, target, adminId, addUserName), taxis: nextTaxis(top, _max.taxis) },
    });
    await recordEvent(tx, createdEvent(row, actor));
    return row;
  });
  return toContentFormA(created);
}

const CHANNEL_OF_SITE = 'SELECT "id" FROM "Channel" WHERE "id" = ? AND "siteId" = ?';
const ADMINISTRATOR_NAME = 'SELECT "userName" FROM "Administrator" WHERE "id" = ?';
/** The channel's highest taxis of a kind (top or not), NULL when it has none; the placeholders given. */
const highestTaxis = (top: boolean, siteId: string, channelId: string, notRecycled: string) =>
  `SELECT MAX("taxis") AS "taxis" FROM "Content" WHERE "siteId" = ${siteId} AND ${notRecycled} AND "channelId" = ${channelId} AND "taxis" ${top ? '>=' : '<'} ${TOP_TAXIS_START}`;
const HIGHEST_TAXIS = {
  below: highestTaxis(false, '?', '?', '"recycled" = 0'),
  top: highestTaxis(true, '?', '?', '"recycled" = 0'),
};

/**
 * createContent's write as one synchronous transaction of the point writes (src/db/pointWrites.ts):
 * the same reads, the same row, the same event. Declines (nothing written) where the ordinary path
 * has an answer to give instead: no such site or channel, or a body it refuses.
 */
function createNow(
  tx: SyncWrite,
  target: { siteId: number; channelId: number },
  body: CreateContentRequest,
  adminId: number,
  actor: Actor,
): ContentFormA | typeof DECLINED {
  const site = tx.all(SITE_ATTRIBUTES, [target.siteId])[0];
  if (site === undefined || tx.all(CHANNEL_OF_SITE, [target.channelId, target.siteId]).length === 0)
    return DECLINED;
  if (body.title.trim() === '') return DECLINED;
  const plan = planOf(body, readSiteAttributes(String(site.attributes)).checkContentLevel);
  const { changes, top } = plan;
  const addUserName =
    changes.addUserName ??
    (adminId === 0 ? '' : String(tx.all(ADMINISTRATOR_NAME, [adminId])[0]?.userName ?? ''));
  const highest = tx.all(top ? HIGHEST_TAXIS.top : HIGHEST_TAXIS.below, [target.siteId, target.channelId])[0]
    ?.taxis as number | null | undefined;
  const row: Record<string, unknown> = {
    ...newContentRow(plan, target, adminId, addUserName),
    taxis: nextTaxis(top, highest),
  };
  // The names are the model's columns (contentChanges sets no other): never client text. The
  // columns not named take the defaults the model declares, which its migration gave the table.
  const columns = Object.keys(row);
  const { lastInsertRowid } = tx.run(
    `INSERT INTO "Content" (${columns.map((column) => `"${column}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    columns.map((column) => row[column]),
  );
  const created = tx.all(CONTENT_BY_ID, [lastInsertRowid])[0] as Content;
  recordEventIn(tx, createdEvent(created, actor));
  return toContentFormA(created);
}

/** What a create reads before its statement on PostgreSQL: the site, its channel, the adder's name. */
const SITE_CHANNEL_AND_NAME = `SELECT "attributes",
    EXISTS (SELECT 1 FROM "Channel" WHERE "id" = $2 AND "siteId" = $1) AS "channel",
    (SELECT "userName" FROM "Administrator" WHERE "id" = $3) AS "userName"
  FROM "Site" WHERE "id" = $1`;

/**
 * createContent's write on PostgreSQL in two round trips where the transaction takes eight: one read
 * (the site's level, the channel, the administrator's name), then one statement (atomic by itself)
 * that inserts the row at one above the channel's highest taxis of its kind and the event from it.
 * The same row, answer and event as the ordinary path. Undefined (nothing written) where the
 * ordinary path has an answer to give instead — no such site or channel, a body it refuses — or when
 * PostgreSQL refused a statement: the ordinary path then gives its answer.
 */
async function createInOneStatement(
  statement: NonNullable<PointWrites['statement']>,
  target: { siteId: number; channelId: number },
  body: CreateContentRequest,
  adminId: number,
  actor: Actor,
): Promise<ContentFormA | undefined> {
  if (body.title.trim() === '') return undefined;
  const found = await rowsUnlessRefused(statement, SITE_CHANNEL_AND_NAME, [
    target.siteId,
    target.channelId,
    adminId,
  ]);
  const site = found?.[0];
  if (site === undefined || site.channel !== true) return undefined;
  const plan = unlessRefused(() =>
    planOf(body, readSiteAttributes(String(site.attributes)).checkContentLevel),
  );
  if (plan === undefined) return undefined;
  const addUserName = plan.changes.addUserName ?? (adminId === 0 ? '' : String(site.userName ?? ''));
  const planned = newContentRow(plan, target, adminId, addUserName);
  const { params, bind } = postgresParams();
  // The names are the model's columns (contentChanges sets no other): never client text.
  const columns = Object.keys(planned) as (keyof typeof planned)[];
  const values = columns.map((column) => bind(planned[column]));
  const highest = highestTaxis(plan.top, bind(target.siteId), bind(target.channelId), 'NOT "recycled"');
  // The event's resource is the row inserted: its id comes from the statement's own RETURNING.
  const event = eventInsertFrom(
    '"created"',
    createdEvent({ ...planned, id: 0 }, actor),
    bind,
    '"created"."id"',
  );
  const sqlText = `WITH "created" AS (
      INSERT INTO "Content" (${columns.map((column) => `"${column}"`).join(', ')}, "taxis")
      VALUES (${values.join(', ')}, GREATEST((${highest}), ${floorOf(plan.top)}) + 1)
      RETURNING ${CONTENT_COLUMNS}
    ), "event" AS (${event})
    SELECT * FROM "created"`;
  const created = (await rowsUnlessRefused(statement, sqlText, params))?.[0] as Content | undefined;
  return created === undefined ? undefined : toContentFormA(created);
}
