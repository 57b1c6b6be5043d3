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
  const siteLevel = readSiteAttributes(site.attributes).checkContentLevel;
  const { taxis: _ignored, ...changes } = contentChanges(body, siteLevel);
  const review = changes.checkedLevel === undefined ? reviewStateOfLevel(0, siteLevel) : {};
  const top = changes.top ?? false;
  const now = new Date();

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
    const highest = _max.taxis ?? (top ? TOP_TAXIS_START : 0);
    const row = await tx.content.create({
      data: {
        ...changes,
        ...review,
        guid: randomUUID(),
        siteId: target.siteId,
        channelId: target.channelId,
        taxis: Math.max(highest, top ? TOP_TAXIS_START : 0) + 1,
        adminId,
        lastEditAdminId: adminId,
        addUserName,
        addDate: changes.addDate ?? now,
        lastEditDate: changes.lastEditDate ?? now,
        createdDate: now,
        lastModifiedDate: now,
      },
    });
    await recordEvent(tx, {
      type: 'content.created',
      resourceId: row.id,
      siteId: row.siteId,
      channelId: row.channelId,
      payload: { title: row.title, checked: row.checked, checkedLevel: row.checkedLevel },
    });
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
  const siteLevel = readSiteAttributes(String(site.attributes)).checkContentLevel;
  const { taxis: _ignored, ...changes } = contentChanges(body, siteLevel);
  const review = changes.checkedLevel === undefined ? reviewStateOfLevel(0, siteLevel) : {};
  const top = changes.top ?? false;
  const now = new Date();
  const addUserName =
    changes.addUserName ??
    (adminId === 0 ? '' : String(tx.all(ADMINISTRATOR_NAME, [adminId])[0]?.userName ?? ''));
  const highest = tx.all(top ? HIGHEST_TAXIS.top : HIGHEST_TAXIS.below, [target.siteId, target.channelId])[0]
    ?.taxis as number | null | undefined;
  const row: Record<string, unknown> = {
    ...changes,
    ...review,
    guid: randomUUID(),
    siteId: target.siteId,
    channelId: target.channelId,
    taxis: Math.max(highest ?? (top ? TOP_TAXIS_START : 0), top ? TOP_TAXIS_START : 0) + 1,
    adminId,
    lastEditAdminId: adminId,
    addUserName,
    addDate: changes.addDate ?? now,
    lastEditDate: changes.lastEditDate ?? now,
    createdDate: now,
    lastModifiedDate: now,
  };
  // The names are the model's columns (contentChanges sets no other): never client text. The
  // columns not named take the defaults the model declares, which its migration gave the table.
  const columns = Object.keys(row);
  const { lastInsertRowid } = tx.run(
    `INSERT INTO "Content" (${columns.map((column) => `"${column}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    columns.map((column) => row[column]),
  );
  const created = tx.all(CONTENT_BY_ID, [lastInsertRowid])[0] as Content;
  recordEventIn(tx, {
    type: 'content.created',
    resourceId: created.id,
    siteId: created.siteId,
    channelId: created.channelId,
    payload: { title: created.title, checked: created.checked, checkedLevel: created.checkedLevel },
  });
  return toContentFormA(created);
}
