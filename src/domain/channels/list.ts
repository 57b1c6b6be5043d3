import { createHash } from 'node:crypto';
import type { Db, DbHandle } from '../../db/client.ts';
import type { SiteChannel, SiteChannelState } from '../../db/pointReads.ts';
import type { components } from '../../generated/openapi.ts';
import { JsonText } from '../jsonText.ts';
import { requireSite } from '../records.ts';
import { channelFormBText } from '../stl/channel.ts';

/*
 * A site's channel list is every channel in form B: 13 MB of JSON at 10,000 channels, which took
 * ~200 ms of CPU to read and build however rarely the tree changes. Each process keeps the text of
 * the lists it answered, with what they were made of, and answers from it while it is current:
 *   - while the site's ContentGeneration (advanced by database triggers in every transaction that
 *     writes the site's contents or channels, on any node, by any process) is the one the text was
 *     checked at, nothing the list shows has changed: one key read;
 *   - after a write, the channels' ids, versions (every write of a channel row increments its
 *     version) and approved-content counts are read (3 columns) and compared with the text's: a
 *     write that does not show in the list (a content's title, its hits) keeps the text;
 *   - otherwise the list is read and built again.
 * The generation is always read before what is compared with it, and it never goes back, so a text
 * is never kept under a generation older than what it shows. The ETag is a digest of the ids,
 * versions and counts: the same on every node for the same list, whatever the generation.
 */

type ListChannelsResponse = components['schemas']['ListChannelsResponse'];

interface KeptList {
  /** The site's generation at which `states` was last found current. */
  generation: string;
  /** id, version, contentNum of each channel, in the list's read order. */
  states: Int32Array;
  etag: string;
  text: JsonText<ListChannelsResponse>;
}

/**
 * The kept texts of each process's own lists take at most this many bytes per database client
 * (the least recently answered go first): a few sites of 10,000 channels (13 MB each).
 */
export const KEPT_LIST_BYTES = 64 << 20;

/**
 * Per database client (its point reads), the kept lists by site id, least recently answered first.
 * Not shared state: a cache of this process's own answers, each checked against the database
 * before it is used, collected with its client.
 */
const keptLists = new WeakMap<DbHandle['reads'], Map<number, KeptList>>();

/** Bumped when the form of the list's text changes, so that no older text's ETag matches a newer. */
const FORM = 'channels-b1';

function statesOf(rows: readonly SiteChannelState[]): Int32Array {
  const states = new Int32Array(rows.length * 3);
  rows.forEach((row, index) => {
    states[index * 3] = row.id;
    states[index * 3 + 1] = row.version;
    states[index * 3 + 2] = row.contentNum;
  });
  return states;
}

function sameStates(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function etagOf(siteId: number, states: Int32Array): string {
  const digest = createHash('sha1')
    .update(`${FORM}:${siteId}:`)
    .update(new Uint8Array(states.buffer, states.byteOffset, states.byteLength))
    .digest('base64url');
  return `W/"${digest}"`;
}

function keep(kept: Map<number, KeptList>, siteId: number, list: KeptList): void {
  kept.delete(siteId);
  if (list.text.bytes.length > KEPT_LIST_BYTES) return;
  kept.set(siteId, list);
  let bytes = 0;
  for (const { text } of kept.values()) bytes += text.bytes.length;
  for (const [id, { text }] of kept) {
    if (bytes <= KEPT_LIST_BYTES) break;
    kept.delete(id);
    bytes -= text.bytes.length;
  }
}

/**
 * Every channel of a site, flat, in tree order (treeOrder), as form B: the JSON text of the answer
 * and its ETag, from this process's kept text while it is current (above).
 */
export async function listChannelsText(
  db: Db,
  reads: DbHandle['reads'],
  siteId: number,
): Promise<{ text: JsonText<ListChannelsResponse>; etag: string }> {
  await requireSite(db, siteId);
  let kept = keptLists.get(reads);
  if (kept === undefined) {
    kept = new Map();
    keptLists.set(reads, kept);
  }
  const generation = await reads.siteGeneration(siteId);
  const held = kept.get(siteId);
  if (held !== undefined) {
    if (held.generation !== generation) {
      const states = statesOf(await reads.siteChannelStates(siteId));
      if (sameStates(states, held.states)) held.generation = generation;
    }
    if (held.generation === generation) {
      keep(kept, siteId, held);
      return held;
    }
  }
  const channels = await reads.siteChannels(siteId);
  const states = statesOf(channels);
  const settingsTexts = new Map<string, string>();
  let json = '{"value":[';
  treeOrder(channels, (channel, isLastNode, index) => {
    if (index > 0) json += ',';
    json += channelFormBText(channel, { isLastNode, contentNum: channel.contentNum }, settingsTexts);
  });
  const text = new JsonText<ListChannelsResponse>(Buffer.from(`${json}]}`));
  const list = { generation, states, etag: etagOf(siteId, states), text };
  keep(kept, siteId, list);
  return list;
}

/**
 * Visits every channel of a site, flat, in tree order (depth first, siblings by taxis then id),
 * from the one read of them all (sorted by taxis and id), in one pass.
 */
function treeOrder(
  channels: readonly SiteChannel[],
  visit: (channel: SiteChannel, isLastNode: boolean, index: number) => void,
): void {
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
  // Depth first without recursion: a deep tree cannot overflow the stack.
  const stack: { channel: SiteChannel; isLastNode: boolean }[] = [];
  const pushSiblings = (siblings: readonly SiteChannel[]) => {
    for (let i = siblings.length - 1; i >= 0; i--) {
      stack.push({ channel: siblings[i] as SiteChannel, isLastNode: i === siblings.length - 1 });
    }
  };
  pushSiblings(roots);
  let index = 0;
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    visit(next.channel, next.isLastNode, index++);
    pushSiblings(childrenOf.get(next.channel.id) ?? []);
  }
}
