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
 *   - after a write, the channels' ids, parents, versions (every write of a channel row increments
 *     its version) and approved-content counts are read (4 columns) and compared with the text's:
 *     a write that does not show in the list (a content's title, its hits) keeps the text;
 *   - otherwise the list is built again: from the kept record (text) of each channel whose
 *     version, count and last-sibling flag are unchanged, and the rows of the others, read by id
 *     (all rows when more than a quarter changed, or when a row read by id is not the state read
 *     before it: written in between).
 * The generation is always read before what is compared with it, and it never goes back, so a text
 * is never kept under a generation older than what it shows. The ETag is a digest of the ids,
 * versions and counts: the same on every node for the same list, whatever the generation.
 */

type ListChannelsResponse = components['schemas']['ListChannelsResponse'];

/** One channel's record in a kept list: its text and what it was made from. */
interface KeptRecord {
  version: number;
  contentNum: number;
  isLastNode: boolean;
  text: string;
}

interface KeptList {
  /** The site's generation at which `states` was last found current. */
  generation: string;
  /** id, parentId, version, contentNum of each channel, in the list's read order. */
  states: Int32Array;
  etag: string;
  text: JsonText<ListChannelsResponse>;
  /** Each channel's record by id, to build the next list from when only a few changed. */
  records: Map<number, KeptRecord>;
}

/**
 * The kept lists of each process take at most this many bytes per database client (the least
 * recently answered go first): a few sites of 10,000 channels (13 MB of text each, held twice:
 * the answer's bytes and its records' texts).
 */
export const KEPT_LIST_BYTES = 64 << 20;

/** A kept list's bytes: its answer, and as much again for its records' texts. */
const sizeOf = (list: KeptList) => 2 * list.text.bytes.length;

/**
 * Past this share of a list's channels changed, the whole list is read again rather than the
 * changed channels by id.
 */
const REREAD_SHARE = 0.25;

/**
 * Per database client (its point reads), the kept lists by site id, least recently answered first.
 * Not shared state: a cache of this process's own answers, each checked against the database
 * before it is used, collected with its client.
 */
const keptLists = new WeakMap<DbHandle['reads'], Map<number, KeptList>>();

/** Bumped when the form of the list's text changes, so that no older text's ETag matches a newer. */
const FORM = 'channels-b2';

function statesOf(rows: readonly SiteChannelState[]): Int32Array {
  const states = new Int32Array(rows.length * 4);
  rows.forEach((row, index) => {
    states[index * 4] = row.id;
    states[index * 4 + 1] = row.parentId;
    states[index * 4 + 2] = row.version;
    states[index * 4 + 3] = row.contentNum;
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
  if (sizeOf(list) > KEPT_LIST_BYTES) return;
  kept.set(siteId, list);
  let bytes = 0;
  for (const held of kept.values()) bytes += sizeOf(held);
  for (const [id, held] of kept) {
    if (bytes <= KEPT_LIST_BYTES) break;
    kept.delete(id);
    bytes -= sizeOf(held);
  }
}

/** A kept record stands for a channel while its version, count and last-sibling flag are the same. */
const current = (record: KeptRecord | undefined, state: SiteChannelState, isLastNode: boolean) =>
  record !== undefined &&
  record.version === state.version &&
  record.contentNum === state.contentNum &&
  record.isLastNode === isLastNode;

/** The ids of the channels of these states (in read order) whose kept record does not stand for them. */
function stale(states: readonly SiteChannelState[], records: ReadonlyMap<number, KeptRecord>): number[] {
  const ids: number[] = [];
  treeOrder(states, (state, isLastNode) => {
    if (!current(records.get(state.id), state, isLastNode)) ids.push(state.id);
  });
  return ids;
}

/**
 * The list of these states (in read order) as text, with each channel's record: from `earlier`'s
 * record where the channel's version, count and last-sibling flag are unchanged, else from its row
 * in `rows`; undefined when a channel it needs has no row there (or a row of another version:
 * written in between), which the caller answers by reading every row.
 */
function listOf(
  siteId: number,
  generation: string,
  states: readonly SiteChannelState[],
  rows: ReadonlyMap<number, SiteChannel>,
  earlier: ReadonlyMap<number, KeptRecord>,
): KeptList | undefined {
  const settingsTexts = new Map<string, string>();
  const records = new Map<number, KeptRecord>();
  let json = '{"value":[';
  let complete = true;
  treeOrder(states, (state, isLastNode, index) => {
    if (!complete) return;
    const { id, version, contentNum } = state;
    let record = earlier.get(id);
    if (record === undefined || !current(record, state, isLastNode)) {
      const row = rows.get(id);
      if (row === undefined || row.version !== version || row.contentNum !== contentNum) {
        complete = false;
        return;
      }
      const text = channelFormBText(row, { isLastNode, contentNum }, settingsTexts);
      record = { version, contentNum, isLastNode, text };
    }
    records.set(id, record);
    if (index > 0) json += ',';
    json += record.text;
  });
  if (!complete) return undefined;
  const bytes = statesOf(states);
  const text = new JsonText<ListChannelsResponse>(Buffer.from(`${json}]}`));
  return { generation, states: bytes, etag: etagOf(siteId, bytes), text, records };
}

/**
 * Every channel of a site, flat, in tree order (treeOrder), as form B: the JSON text of the answer
 * and its ETag, from this process's kept list while it is current (above); after a change, built
 * again from the kept records of the channels that did not change and the rows of those that did.
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
  // Read before anything it stands for (see above).
  const generation = await reads.siteGeneration(siteId);
  const held = kept.get(siteId);
  let list: KeptList | undefined;
  if (held !== undefined && held.generation === generation) list = held;
  else if (held !== undefined) {
    const states = await reads.siteChannelStates(siteId);
    if (sameStates(statesOf(states), held.states)) {
      held.generation = generation;
      list = held;
    } else {
      // The channels whose record changed (or that are new): read again by id, unless too many.
      const changed = stale(states, held.records);
      if (changed.length <= states.length * REREAD_SHARE) {
        const rows = new Map((await reads.siteChannelsAmong(siteId, changed)).map((row) => [row.id, row]));
        list = listOf(siteId, generation, states, rows, held.records);
      }
    }
  }
  if (list === undefined) {
    const rows = await reads.siteChannels(siteId);
    list = listOf(siteId, generation, rows, new Map(rows.map((row) => [row.id, row])), new Map());
    // Every row was read in one statement, with its state: nothing it needs can be missing.
    if (list === undefined) throw new Error(`the channel list of site ${siteId} could not be built`);
  }
  keep(kept, siteId, list);
  return list;
}

/**
 * Visits every channel of a site, flat, in tree order (depth first, siblings by taxis then id),
 * from the one read of them all (sorted by taxis and id), in one pass.
 */
function treeOrder<T extends { id: number; parentId: number }>(
  channels: readonly T[],
  visit: (channel: T, isLastNode: boolean, index: number) => void,
): void {
  const ids = new Set(channels.map((channel) => channel.id));
  // Children in the read's order, so each list of siblings is already by taxis then id.
  const childrenOf = new Map<number, T[]>();
  const roots: T[] = [];
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
  const stack: { channel: T; isLastNode: boolean }[] = [];
  const pushSiblings = (siblings: readonly T[]) => {
    for (let i = siblings.length - 1; i >= 0; i--) {
      stack.push({ channel: siblings[i] as T, isLastNode: i === siblings.length - 1 });
    }
  };
  pushSiblings(roots);
  let index = 0;
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    visit(next.channel, next.isLastNode, index++);
    pushSiblings(childrenOf.get(next.channel.id) ?? []);
  }
}
