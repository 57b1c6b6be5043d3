import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { invalidFields } from '../errors.ts';
import type { Actor } from '../events/actor.ts';
import { recordEvent } from '../events/record.ts';
import { requireSite } from '../records.ts';
import type { ChannelFormA } from './forms.ts';
import { channelWithChildren } from './read.ts';
import { formatParentsPath, parseParentsPath } from './tree.ts';
import { assertIndexNameFree, channelChanges } from './update.ts';

export type CreateChannelRequest = components['schemas']['CreateChannelRequest'];

/**
 * Add a channel at the end of its parent's children. Its tree fields follow from the parent's, and
 * the parent's childrenCount is advanced in the same transaction, so every stored tree field stays
 * exact without recomputing the site's tree.
 */
export async function createChannel(
  db: Db,
  siteId: number,
  body: CreateChannelRequest,
  actor: Actor,
): Promise<ChannelFormA> {
  const site = await requireSite(db, siteId);
  const changes = channelChanges(body);
  const now = new Date();
  const created = await writeTransaction(db, async (tx) => {
    const parent = await tx.channel.findFirst({ where: { id: body.parentId, siteId } });
    if (!parent) {
      throw invalidFields([{ field: 'parentId', message: `names no channel of site ${siteId}` }]);
    }
    if (changes.indexName) await assertIndexNameFree(tx, siteId, changes.indexName);
    const { _max } = await tx.channel.aggregate({
      _max: { taxis: true },
      where: { siteId, parentId: parent.id },
    });
    await tx.channel.update({
      where: { id: parent.id },
      data: { childrenCount: { increment: 1 }, version: { increment: 1 } },
    });
    const row = await tx.channel.create({
      data: {
        ...changes,
        channelName: changes.channelName ?? body.channelName,
        guid: randomUUID(),
        siteId,
        parentId: parent.id,
        parentsPath: formatParentsPath([...parseParentsPath(parent.parentsPath), parent.id]),
        parentsCount: parent.parentsCount + 1,
        childrenCount: 0,
        taxis: (_max.taxis ?? 0) + 1,
        addDate: now,
        createdDate: now,
        lastModifiedDate: now,
      },
    });
    await recordEvent(tx, {
      actor,
      type: 'channel.created',
      resourceId: row.id,
      siteId,
      channelId: row.id,
      payload: { channelName: row.channelName, parentId: parent.id, indexName: row.indexName },
    });
    return row;
  });
  return channelWithChildren(db, site, created);
}
