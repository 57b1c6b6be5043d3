import type { Db } from '../../db/client.ts';
import { writeTransaction } from '../../db/transaction.ts';
import { invalidFields, notFound } from '../errors.ts';
import type { Actor } from '../events/actor.ts';
import { recordEvent } from '../events/record.ts';
import { requireChannel, requireSite } from '../records.ts';
import { type Precondition, refuseUnlessMissing, versionFilter } from '../versions.ts';
import type { ChannelFormA } from './forms.ts';
import { channelWithChildren } from './read.ts';

/** The channel and every channel below it, from the site's parent links. */
function subtreeOf(links: readonly { id: number; parentId: number }[], rootId: number): number[] {
  const childrenOf = new Map<number, number[]>();
  for (const { id, parentId } of links) {
    const siblings = childrenOf.get(parentId);
    if (siblings) siblings.push(id);
    else childrenOf.set(parentId, [id]);
  }
  const ids: number[] = [];
  for (const pending = [rootId]; pending.length > 0; ) {
    const id = pending.pop() as number;
    ids.push(id);
    for (const child of childrenOf.get(id) ?? []) pending.push(child);
  }
  return ids;
}

/**
 * Delete a channel and its sub-tree in one transaction: their contents go to the recycle bin (the
 * database's triggers take them out of the tallies, labels and stored counts), the channels are
 * removed and the parent's childrenCount goes down. Answers the channel as it was. With a
 * precondition (If-Match) the channel's row is first claimed at the version it names: a stale one
 * deletes nothing (412), and a write racing the delete waits for it.
 */
export async function deleteChannel(
  db: Db,
  target: { siteId: number; channelId: number },
  actor: Actor,
  precondition?: Precondition,
): Promise<ChannelFormA> {
  const site = await requireSite(db, target.siteId);
  const channel = await requireChannel(db, target.siteId, target.channelId);
  if (channel.parentId === 0) {
    throw invalidFields([
      { field: 'channelId', message: 'is the root channel of the site, which cannot be deleted' },
    ]);
  }
  const before = await channelWithChildren(db, site, channel);
  const now = new Date();
  const deleted = await writeTransaction(db, async (tx) => {
    const { count } = await tx.channel.updateMany({
      where: { id: channel.id, siteId: site.id, ...versionFilter(precondition) },
      data: { version: { increment: 1 } },
    });
    if (count === 0) {
      await refuseUnlessMissing(`Channel ${channel.id}`, precondition, () =>
        tx.channel.findUnique({ where: { id: channel.id }, select: { version: true } }),
      );
      return false;
    }
    const links = await tx.channel.findMany({
      where: { siteId: site.id },
      select: { id: true, parentId: true },
    });
    if (!links.some((link) => link.id === channel.id)) return false;
    const ids = subtreeOf(links, channel.id);
    await tx.content.updateMany({
      where: { siteId: site.id, recycled: false, channelId: { in: ids } },
      data: { recycled: true, recycledDate: now },
    });
    await tx.channel.deleteMany({ where: { siteId: site.id, id: { in: ids } } });
    await tx.channel.updateMany({
      where: { siteId: site.id, id: channel.parentId },
      data: { childrenCount: { decrement: 1 }, lastModifiedDate: now, version: { increment: 1 } },
    });
    await recordEvent(tx, {
      actor,
      type: 'channel.deleted',
      resourceId: channel.id,
      siteId: site.id,
      channelId: channel.id,
      payload: { channelIds: ids },
    });
    return true;
  });
  if (!deleted) throw notFound(`Channel ${target.channelId} does not exist in site ${target.siteId}`);
  return before;
}
