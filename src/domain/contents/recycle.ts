import type { Db } from '../../db/client.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { pagingOf } from '../accounts/paging.ts';
import { invalidFields, notFound } from '../errors.ts';
import type { Actor } from '../events/actor.ts';
import { recordEvent } from '../events/record.ts';
import { requireSite } from '../records.ts';
import { type ContentFormA, toContentFormA } from './forms.ts';

type ListContentsResponse = components['schemas']['ListContentsResponse'];

/**
 * Take a content out of the recycle bin, back into its channel (or another one) with every other
 * field as it was. The lists' tallies, labels and stored counts take it back through the
 * database's triggers, in the same transaction.
 */
export async function restoreContent(
  db: Db,
  target: { siteId: number; channelId: number; id: number },
  actor: Actor,
  toChannelId?: number,
): Promise<ContentFormA> {
  await requireSite(db, target.siteId);
  const channelId = toChannelId ?? target.channelId;
  const now = new Date();
  const restored = await writeTransaction(db, async (tx) => {
    const { count } = await tx.content.updateMany({
      where: { id: target.id, siteId: target.siteId, channelId: target.channelId, recycled: true },
      data: {
        recycled: false,
        recycledDate: null,
        channelId,
        lastModifiedDate: now,
        version: { increment: 1 },
      },
    });
    if (count === 0) return null;
    // Checked inside the transaction: a channel deleted meanwhile cannot receive the content.
    const into = await tx.channel.findFirst({
      where: { id: channelId, siteId: target.siteId },
      select: { id: true },
    });
    if (!into) {
      throw invalidFields([
        toChannelId === undefined
          ? { field: 'toChannelId', message: `is needed: channel ${channelId} no longer exists` }
          : { field: 'toChannelId', message: `names no channel of site ${target.siteId}` },
      ]);
    }
    await recordEvent(tx, {
      actor,
      type: 'content.restored',
      resourceId: target.id,
      siteId: target.siteId,
      channelId,
      payload: { fromChannelId: target.channelId },
    });
    return tx.content.findUnique({ where: { id: target.id } });
  });
  if (!restored) {
    throw notFound(
      `The recycle bin of channel ${target.channelId} of site ${target.siteId} holds no content ${target.id}`,
    );
  }
  return toContentFormA(restored);
}

/**
 * A page of a site's recycle bin, most recently deleted first, and its count, read in one
 * transaction so they agree. Paged leniently, as the account lists are.
 */
export async function listRecycledContents(
  db: Db,
  siteId: number,
  query: { channelId?: number; page?: number | string; perPage?: number | string },
): Promise<ListContentsResponse> {
  await requireSite(db, siteId);
  const { skip, take } = pagingOf(query.page, query.perPage);
  const where = {
    siteId,
    recycled: true,
    ...(query.channelId === undefined ? {} : { channelId: query.channelId }),
  };
  const [totalCount, rows] = await db.$transaction([
    db.content.count({ where }),
    db.content.findMany({ where, orderBy: [{ recycledDate: 'desc' }, { id: 'desc' }], skip, take }),
  ]);
  return { totalCount, contents: rows.map(toContentFormA) };
}
