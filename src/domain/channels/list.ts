import type { Db } from '../../db/client.ts';
import type { Channel } from '../../db/models.ts';
import { requireSite } from '../records.ts';
import { type ChannelFormB, toChannelFormB } from '../stl/channel.ts';

/**
 * Every channel of a site, flat, in tree order (depth first, siblings by taxis then id), as form B.
 * Two reads in one snapshot whatever the size of the tree: the channels, and their approved
 * contents from the tallies the database keeps (ContentTally), instead of a count per channel.
 */
export async function listChannels(db: Db, siteId: number): Promise<ChannelFormB[]> {
  await requireSite(db, siteId);
  const [channels, tallies] = await db.$transaction([
    db.channel.findMany({ where: { siteId }, orderBy: [{ taxis: 'asc' }, { id: 'asc' }] }),
    db.contentTally.findMany({ where: { siteId, checked: true }, select: { channelId: true, count: true } }),
  ]);
  const approved = new Map(tallies.map((tally) => [tally.channelId, tally.count]));
  const ids = new Set(channels.map((channel) => channel.id));
  const childrenOf = new Map<number, Channel[]>();
  const roots: Channel[] = [];
  for (const channel of channels) {
    // A channel whose parent is not in the site (never written so by the service) is kept, as a root.
    if (!ids.has(channel.parentId)) roots.push(channel);
    else {
      const siblings = childrenOf.get(channel.parentId);
      if (siblings) siblings.push(channel);
      else childrenOf.set(channel.parentId, [channel]);
    }
  }
  const ordered: ChannelFormB[] = [];
  // Depth first without recursion: a deep tree cannot overflow the stack.
  const stack: { channel: Channel; isLastNode: boolean }[] = [];
  const pushSiblings = (siblings: readonly Channel[]) => {
    for (let i = siblings.length - 1; i >= 0; i--) {
      stack.push({ channel: siblings[i] as Channel, isLastNode: i === siblings.length - 1 });
    }
  };
  pushSiblings(roots);
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { channel, isLastNode } = next;
    ordered.push(toChannelFormB(channel, { isLastNode, contentNum: approved.get(channel.id) ?? 0 }));
    pushSiblings(childrenOf.get(channel.id) ?? []);
  }
  return ordered;
}
