import type { Db } from '../../db/client.ts';
import type { Channel, Site } from '../../db/models.ts';
import { DRAFT_LEVEL } from '../contents/review.ts';
import { requireChannel, requireSite } from '../records.ts';
import { type ChannelFormA, toChannelFormA } from './forms.ts';

/** Form A of a channel with its direct children, from three queries whatever the number of children. */
export async function channelWithChildren(db: Db, site: Site, channel: Channel): Promise<ChannelFormA> {
  const children = await db.channel.findMany({
    where: { siteId: site.id, parentId: channel.id },
    orderBy: [{ taxis: 'asc' }, { id: 'asc' }],
  });
  const drafts = await db.content.groupBy({
    by: ['channelId'],
    where: {
      // The site too, so that the (siteId, recycled, channelId, ...) index serves it.
      siteId: site.id,
      channelId: { in: [channel.id, ...children.map((child) => child.id)] },
      checkedLevel: DRAFT_LEVEL,
      recycled: false,
    },
    _count: { _all: true },
  });
  const withDrafts = new Set(drafts.map((row) => row.channelId));
  return toChannelFormA(channel, site, children, (id) => ({ hasDraftContents: withDrafts.has(id) }));
}

/** Form A of one channel, with the version its strong ETag is made of (src/domain/versions.ts). */
export async function getChannel(
  db: Db,
  siteId: number,
  channelId: number,
): Promise<{ channel: ChannelFormA; version: number }> {
  const site = await requireSite(db, siteId);
  const channel = await requireChannel(db, siteId, channelId);
  return { channel: await channelWithChildren(db, site, channel), version: channel.version };
}
