import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.ts';
import type { components } from '../../generated/openapi.ts';
import { invalidFields } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import type { Principal } from '../principal.ts';
import { requireChannel, requireSite } from '../records.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import { reviewerOf } from './check.ts';
import { type ContentFormA, toContentFormA } from './forms.ts';
import { reviewStateOfLevel } from './review.ts';
import { contentChanges } from './update.ts';

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
  db: Db,
  target: { siteId: number; channelId: number },
  body: CreateContentRequest,
  principal: Principal,
): Promise<ContentFormA> {
  const { adminId } = reviewerOf(principal);
  const site = await requireSite(db, target.siteId);
  await requireChannel(db, target.siteId, target.channelId);
  if (body.title.trim() === '') throw invalidFields([{ field: 'title', message: 'must not be empty' }]);
  const siteLevel = readSiteAttributes(site.attributes).checkContentLevel;
  const { taxis: _ignored, ...changes } = contentChanges(body, siteLevel);
  const review = changes.checkedLevel === undefined ? reviewStateOfLevel(0, siteLevel) : {};
  const top = changes.top ?? false;
  const now = new Date();

  const created = await db.$transaction(async (tx) => {
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
