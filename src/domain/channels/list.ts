import type { Db, DbHandle } from '../../db/client.ts';
import type { SiteChannel } from '../../db/pointReads.ts';
import { requireSite } from '../records.ts';
import { type ChannelFormB, toChannelFormB } from '../stl/channel.ts';

/**
 * Every channel of a site, flat, in tree order (depth first, siblings by taxis then id), as form B.
 * One read whatever the size of the tree (the channels sorted by taxis and id, each with its
 * approved contents from the tallies the database keeps), then the order in one pass over them.
 */
export async function listChannels(
  db: Db,
  reads: DbHandle['reads'],
  siteId: number,
): Promise<ChannelFormB[]> {
  await requireSite(db, siteId);
  const channels = await reads.siteChannels(siteId);
  const ids = new Set(channels.map((channel) => channel.id));
  // Children in the read's order, so each list of siblings is already by taxis then id.
  const childrenOf = new Map<number, SiteChannel[]>();
  const roots: SiteChannel[] = [];
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
  const stack: { channel: SiteChannel; isLastNode: boolean }[] = [];
  const pushSiblings = (siblings: readonly SiteChannel[]) => {
    for (let i = siblings.length - 1; i >= 0; i--) {
      stack.push({ channel: siblings[i] as SiteChannel, isLastNode: i === siblings.length - 1 });
    }
  };
  pushSiblings(roots);
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { channel, isLastNode } = next;
    ordered.push(toChannelFormB(channel, { isLastNode, contentNum: channel.contentNum }));
    pushSiblings(childrenOf.get(channel.id) ?? []);
  }
  return ordered;
}
