import { randomUUID } from 'node:crypto';
import type { DbHandle } from '../../db/client.ts';
import type { Content } from '../../db/models.ts';
import { DECLINED, type SyncWrite } from '../../db/pointWrites.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { invalidFields } from '../errors.ts';
import { recordEvent, recordEventIn } from '../events/record.ts';
import type { Principal } from '../principal.ts';
import { requireChannel, requireSite } from '../records.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import { reviewerOf } from './check.ts';
import { type ContentFormA, toContentFormA } from './forms.ts';
import { reviewStateOfLevel } from './review.ts';
import { CONTENT_BY_ID, contentChanges, SITE_ATTRIBUTES } from './update.ts';

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

/** The new row: the plan, and what the service sets (identity, order at the top of its kind, dates). */
function newContentRow(
  { changes, review, top, now }: ReturnType<typeof planOf>,
  target: { siteId: number; channelId: number },
  highest: number | null | undefined,
  adminId: number,
  addUserName: string,
) {
  const floor = top ? TOP_TAXIS_START : 0;
  return {
    ...changes,
    ...review,
    guid: randomUUID(),
    siteId: target.siteId,
    channelId: target.channelId,
    taxis: Math.max(highest ?? floor, floor) + 1,
    adminId,
    lastEditAdminId: adminId,
    addUserName,
    addDate: changes.addDate ?? now,
    lastEditDate: changes.lastEditDate ?? now,
    createdDate: now,
    lastModifiedDate: now,
  };
}

const createdEvent = (row: Content) => ({
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
  const fast = writes.transaction((tx) => createNow(tx, target, body, adminId));
  if (fast !== undefined) return fast;
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
      data: newContentRow(plan, target, _max.taxis, adminId, addUserName),
    });
    await recordEvent(tx, createdEvent(row));
    return row;
  });
  return toContentFormA(created);
}

const CHANNEL_OF_SITE = 'SELECT "id" FROM "Channel" WHERE "id" = ? AND "siteId" = ?';
const ADMINISTRATOR_NAME = 'SELECT "userName" FROM "Administrator" WHERE "id" = ?';
const HIGHEST_TAXIS = {
  below: `SELECT MAX("taxis") AS "taxis" FROM "Content" WHERE "siteId" = ? AND "recycled" = 0 AND "channelId" = ? AND "taxis" < ${TOP_TAXIS_START}`,
  top: `SELECT MAX("taxis") AS "taxis" FROM "Content" WHERE "siteId" = ? AND "recycled" = 0 AND "channelId" = ? AND "taxis" >= ${TOP_TAXIS_START}`,
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
  const row: Record<string, unknown> = newContentRow(plan, target, highest, adminId, addUserName);
  // The names are the model's columns (contentChanges sets no other): never client text. The
  // columns not named take the defaults the model declares, which its migration gave the table.
  const columns = Object.keys(row);
  const { lastInsertRowid } = tx.run(
    `INSERT INTO "Content" (${columns.map((column) => `"${column}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    columns.map((column) => row[column]),
  );
  const created = tx.all(CONTENT_BY_ID, [lastInsertRowid])[0] as Content;
  recordEventIn(tx, createdEvent(created));
  return toContentFormA(created);
}
