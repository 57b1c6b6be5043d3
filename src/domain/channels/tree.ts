/*
 * The derived tree fields of a site's channels. They are stored (so reads need no recursion) and
 * recomputed by the service whenever the tree changes; input never sets them.
 */

export interface ChannelLink {
  id: number;
  /** 0 for the site's root channel. */
  parentId: number;
}

export interface ChannelTreeFields {
  /** Ids of the ancestors, root first; empty for the root. */
  parentsPath: number[];
  parentsCount: number;
  /** Number of direct children. */
  childrenCount: number;
}

/**
 * Ids of the channels that do not reach a root (parentId 0) through parents within the set: their
 * parent is missing, or they sit on or below a cycle.
 */
export function detachedChannels(channels: readonly ChannelLink[]): number[] {
  const parentOf = new Map(channels.map((channel) => [channel.id, channel.parentId]));
  const attached = new Map<number, boolean>();
  for (const channel of channels) {
    const trail: number[] = [];
    const onTrail = new Set<number>();
    let current = channel.id;
    let result: boolean | undefined;
    while (result === undefined) {
      const known = attached.get(current);
      if (known !== undefined) result = known;
      else if (onTrail.has(current)) result = false;
      else {
        const parentId = parentOf.get(current);
        trail.push(current);
        onTrail.add(current);
        if (parentId === undefined) result = false;
        else if (parentId === 0) result = true;
        else current = parentId;
      }
    }
    for (const id of trail) attached.set(id, result);
  }
  return channels.filter((channel) => !attached.get(channel.id)).map((channel) => channel.id);
}

/**
 * The tree fields of every channel of one site. The set must be closed: every parentId is 0 or the
 * id of a channel in the set, with no cycles (check with detachedChannels first).
 */
export function computeChannelTree(channels: readonly ChannelLink[]): Map<number, ChannelTreeFields> {
  const detached = detachedChannels(channels);
  if (detached.length > 0) throw new Error(`channels ${detached.join(', ')} do not reach a root channel`);
  const parentOf = new Map(channels.map((channel) => [channel.id, channel.parentId]));
  const tree = new Map<number, ChannelTreeFields>();
  const pathOf = (id: number): number[] => {
    const known = tree.get(id);
    if (known) return known.parentsPath;
    const parentId = parentOf.get(id) ?? 0;
    const parentsPath = parentId === 0 ? [] : [...pathOf(parentId), parentId];
    tree.set(id, { parentsPath, parentsCount: parentsPath.length, childrenCount: 0 });
    return parentsPath;
  };
  for (const channel of channels) pathOf(channel.id);
  for (const channel of channels) {
    const parent = tree.get(channel.parentId);
    if (parent) parent.childrenCount += 1;
  }
  return tree;
}

/** The stored form of parentsPath: ids joined by commas. */
export function formatParentsPath(ids: readonly number[]): string {
  return ids.join(',');
}

export function parseParentsPath(text: string): number[] {
  return text === '' ? [] : text.split(',').map(Number);
}
