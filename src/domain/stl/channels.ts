import type { Db, DbHandle } from '../../db/client.ts';
import type { Channel } from '../../db/models.ts';
import { invalidFields } from '../errors.ts';
import { normalizeList, splitList } from '../lists.ts';
import { type ChannelFormB, toChannelFormB } from './channel.ts';
import { type ChannelChoice, chooseSiteAndChannel, type SiteChoice } from './choose.ts';

/*
 * The template tag's channel list (`stl:channels`): channels around one channel, in form B. The
 * scopes and orders are the original's for channels (docs/api/template-tags.md): the default scope
 * is Children, `All` is the channel with all its descendants, `Default` is taxis ascending. A
 * site's channels are read whole in one snapshot with their tallies (as the flat channel list
 * does), then chosen, ordered and windowed here: a site holds thousands of channels at most.
 */

export type StlChannelScope = 'Self' | 'Children' | 'SelfAndChildren' | 'Descendant' | 'All';
export type StlChannelOrder = 'Default' | 'Back' | 'AddDate' | 'AddDateBack' | 'Hits' | 'Random';

export interface StlChannelsRequest extends SiteChoice, ChannelChoice {
  scope?: StlChannelScope | undefined;
  order?: StlChannelOrder | undefined;
  startNum?: number | undefined;
  totalNum?: number | undefined;
  group?: string | undefined;
  groupNot?: string | undefined;
}

/** Up to this many channels in scope, order=Hits sums their contents' hits by channel id; past it, by site. */
const HITS_BY_ID_LIMIT = 500;

/** Whether `channel` is in `scope` of `around` (parentsPath holds the ancestors' ids, root first). */
function inScope(channel: Channel, around: Channel, scope: StlChannelScope): boolean {
  const self = channel.id === around.id;
  const child = channel.parentId === around.id;
  const descendant = splitList(channel.parentsPath).includes(String(around.id));
  switch (scope) {
    case 'Self':
      return self;
    case 'Children':
      return child;
    case 'SelfAndChildren':
      return self || child;
    case 'Descendant':
      return descendant;
    case 'All':
      return self || descendant;
  }
}

/** Group names compare without regard to case, as the contents' groups do. */
const lowered = (names: readonly string[]) => new Set(names.map((name) => name.toLowerCase()));

function inGroups(channel: Channel, wanted: Set<string>, refused: Set<string>): boolean {
  if (wanted.size === 0 && refused.size === 0) return true;
  const groups = splitList(channel.groupNames).map((name) => name.toLowerCase());
  if (wanted.size > 0 && !groups.some((name) => wanted.has(name))) return false;
  return !groups.some((name) => refused.has(name));
}

const byTaxis = (a: Channel, b: Channel) => a.taxis - b.taxis || a.id - b.id;
const byAddDate = (a: Channel, b: Channel) => a.addDate.getTime() - b.addDate.getTime() || a.id - b.id;

function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/** The channels in the tag's order; `hits` holds each channel's approved contents' hits. */
function ordered(channels: Channel[], order: StlChannelOrder, hits: Map<number, number>): Channel[] {
  switch (order) {
    case 'Default':
      return channels.sort(byTaxis);
    case 'Back':
      return channels.sort((a, b) => byTaxis(b, a));
    case 'AddDate':
      return channels.sort((a, b) => byAddDate(b, a));
    case 'AddDateBack':
      return channels.sort(byAddDate);
    case 'Hits':
      return channels.sort((a, b) => (hits.get(b.id) ?? 0) - (hits.get(a.id) ?? 0) || byTaxis(a, b));
    case 'Random':
      return shuffled(channels);
  }
}

function windowOf(request: StlChannelsRequest, maxTotal: number): { start: number; end: number } {
  const totalNum = request.totalNum ?? 0;
  if (totalNum > maxTotal)
    throw invalidFields([
      { field: 'totalNum', message: `must be at most ${maxTotal} (0 = all, up to ${maxTotal})` },
    ]);
  const start = (request.startNum ?? 1) - 1;
  return { start, end: start + (totalNum === 0 ? maxTotal : totalNum) };
}

/** Sum of the hits of each channel's approved contents outside the recycle bin. */
async function hitsByChannel(db: Db, siteId: number, ids: number[]): Promise<Map<number, number>> {
  const sums = await db.content.groupBy({
    by: ['channelId'],
    where: {
      siteId,
      recycled: false,
      checked: true,
      ...(ids.length <= HITS_BY_ID_LIMIT && { channelId: { in: ids } }),
    },
    _sum: { hits: true },
  });
  return new Map(sums.map((row) => [row.channelId, row._sum.hits ?? 0]));
}

export async function listStlChannels(
  { db, reads }: Pick<DbHandle, 'db' | 'reads'>,
  request: StlChannelsRequest,
  maxTotal: number,
): Promise<ChannelFormB[]> {
  const { start, end } = windowOf(request, maxTotal);
  const { site, channel: around } = await chooseSiteAndChannel(reads, request);
  // The channels and the tallies in one snapshot, as the flat channel list reads them.
  const [channels, tallies] = await db.$transaction([
    db.channel.findMany({ where: { siteId: site.id } }),
    db.contentTally.findMany({
      where: { siteId: site.id, checked: true },
      select: { channelId: true, count: true },
    }),
  ]);
  const wanted = lowered(normalizeList(request.group ?? ''));
  const refused = lowered(normalizeList(request.groupNot ?? ''));
  const scope = request.scope ?? 'Children';
  const chosen = channels.filter(
    (channel) => inScope(channel, around, scope) && inGroups(channel, wanted, refused),
  );
  const order = request.order ?? 'Default';
  const hits =
    order === 'Hits' && chosen.length > 0
      ? await hitsByChannel(
          db,
          site.id,
          chosen.map((channel) => channel.id),
        )
      : new Map<number, number>();
  const picked = ordered(chosen, order, hits).slice(start, end);

  // isLastNode: no sibling after it by taxis, then id (the same rule as stl/channel).
  const lastOfParent = new Map<number, Channel>();
  for (const channel of channels) {
    const last = lastOfParent.get(channel.parentId);
    if (!last || byTaxis(last, channel) < 0) lastOfParent.set(channel.parentId, channel);
  }
  const approved = new Map(tallies.map((tally) => [tally.channelId, tally.count]));
  return picked.map((channel) =>
    toChannelFormB(channel, {
      isLastNode: lastOfParent.get(channel.parentId)?.id === channel.id,
      contentNum: approved.get(channel.id) ?? 0,
    }),
  );
}
