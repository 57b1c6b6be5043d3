import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { SCOPES } from '../src/domain/principal.ts';

/*
 * The benchmark's data set, generated from a seed so that every run (and every database) holds the
 * same rows: one site, a tree of 200 channels, and N contents with varied flags, ~20 groups, ~50 tags,
 * every review state, titles from a word list in which one word ("market") is very common, and
 * ~2 KB bodies. It is written as the import file users load with `cms import FILE`.
 *
 * The shape is chosen so that the filtered deep page of the scenarios has real rows at 100k: the
 * "News" subtree (15 channels) holds 30% of the contents, 60% of titles contain "market" and 40% of
 * contents are hot, so that filter keeps ~7% of the contents (~7,200 of 100k, page 200 of 30 is full).
 */

export const SITE_ID = 1;
/** The root of the 15-channel subtree the filtered scenario searches. */
export const NEWS_CHANNEL_ID = 2;
export const CHANNEL_COUNT = 200;
export const COMMON_WORD = 'market';

/** mulberry32: small, fast, good enough for test data, and the same on every platform. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'annual budget city council river bridge school teacher student garden summer winter spring autumn ' +
  'festival music concert theatre museum library science research energy solar wind water harbour ' +
  'railway station airport traffic health hospital doctor nurse sport football tennis cycling ' +
  'election vote policy report review update notice event workshop seminar course training award ' +
  'prize history heritage culture language travel tourism hotel restaurant food coffee bread farm ' +
  'harvest weather storm forest park lake mountain valley village town region nation world global ' +
  'local digital online network software data cloud security privacy service customer product ' +
  'industry factory worker union salary pension housing rent price growth trade export import bank ' +
  'finance tax reform law court justice police safety fire rescue volunteer charity community family ' +
  'children youth senior women men people leader minister mayor plan project launch opening closing'
).split(' ');

export const GROUPS = Array.from({ length: 20 }, (_, i) => `group${String(i + 1).padStart(2, '0')}`);
export const TAGS = Array.from({ length: 50 }, (_, i) => `tag${String(i + 1).padStart(2, '0')}`);

export interface BenchChannel {
  id: number;
  siteId: number;
  parentId: number;
  channelName: string;
  indexName: string;
  taxis: number;
}

/**
 * Root (id 1 = the site's id), 10 sections (2-11) under it; News (2) has 4 children with 10
 * grandchildren between them (15 channels in all); the other 175 channels hang under sections 3-11
 * and under each other, placed by the seeded generator.
 */
export function benchChannels(seed: number): BenchChannel[] {
  const next = seededRandom(seed ^ 0x5eed);
  const channel = (id: number, parentId: number, name: string): BenchChannel => ({
    id,
    siteId: SITE_ID,
    parentId,
    channelName: name,
    indexName: `c${id}`,
    taxis: id,
  });
  const channels = [channel(1, 0, 'Home')];
  for (let id = 2; id <= 11; id++) channels.push(channel(id, 1, id === 2 ? 'News' : `Section ${id}`));
  const newsChildren = [12, 13, 14, 15];
  for (const id of newsChildren) channels.push(channel(id, NEWS_CHANNEL_ID, `News ${id}`));
  const grandchildrenOf: [number, number][] = [
    [12, 3],
    [13, 3],
    [14, 3],
    [15, 1],
  ];
  let id = 16;
  for (const [parent, count] of grandchildrenOf)
    for (let i = 0; i < count; i++) channels.push(channel(id++, parent, `News ${parent}.${i + 1}`));
  // id is 26 here: the rest go under sections 3-11 or under an earlier non-News channel.
  const others = channels.filter((c) => c.id >= 3 && c.id <= 11).map((c) => c.id);
  for (; id <= CHANNEL_COUNT; id++) {
    const parentId = others[Math.floor(next() * others.length)]!;
    channels.push(channel(id, parentId, `Topic ${id}`));
    others.push(id);
  }
  return channels;
}

/** Ids of a channel and all its descendants. */
export function subtreeOf(channels: BenchChannel[], rootId: number): number[] {
  const ids = [rootId];
  for (let i = 0; i < ids.length; i++) for (const c of channels) if (c.parentId === ids[i]) ids.push(c.id);
  return ids;
}

const pad = (n: number) => String(n).padStart(2, '0');
function dateText(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

const REVIEW_STATES: [number, number][] = [
  // [checkedLevel, cumulative share]: mostly approved, some pending, drafts, rejected, later stages.
  [1, 0.7],
  [2, 0.75],
  [0, 0.85],
  [-99, 0.93],
  [-1, 1],
];

/** One content; `next` is the generator's stream, so contents depend on all that came before. */
function benchContent(index: number, next: () => number, news: number[], rest: number[]) {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const channelId = next() < 0.3 ? pick(news) : pick(rest);
  const words = Array.from({ length: 3 + Math.floor(next() * 4) }, () => pick(WORDS));
  if (next() < 0.6) words.splice(Math.floor(next() * (words.length + 1)), 0, COMMON_WORD);
  const title = `${words[0]![0]!.toUpperCase()}${words[0]!.slice(1)} ${words.slice(1).join(' ')}`;
  const paragraphs: string[] = [];
  let length = 0;
  while (length < 2000) {
    const sentence = Array.from({ length: 12 }, () => pick(WORDS)).join(' ');
    paragraphs.push(`<p>${sentence}.</p>`);
    length += sentence.length + 8;
  }
  const roll = next();
  const checkedLevel = REVIEW_STATES.find(([, share]) => roll < share)![0];
  const groups = next() < 0.5 ? [] : Array.from({ length: 1 + Math.floor(next() * 2) }, () => pick(GROUPS));
  const tags = next() < 0.3 ? [] : Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(TAGS));
  const added = Date.UTC(2020, 0, 1) + Math.floor(next() * 5 * 365 * 86400) * 1000;
  return {
    id: index + 1,
    siteId: SITE_ID,
    channelId,
    title,
    body: paragraphs.join(''),
    summary: words.join(' '),
    author: pick(['alice', 'bob', 'carol', 'dave', 'erin']),
    taxis: 1 + Math.floor(next() * 50000),
    hits: Math.floor(next() ** 3 * 100000),
    checkedLevel,
    top: next() < 0.02,
    recommend: next() < 0.1,
    hot: next() < 0.4,
    color: next() < 0.05,
    groupNames: [...new Set(groups)],
    tagNames: [...new Set(tags)],
    addDate: dateText(added),
    lastModifiedDate: dateText(added + Math.floor(next() * 30 * 86400) * 1000),
  };
}

export type BenchContent = ReturnType<typeof benchContent>;

/** The contents, in id order, one at a time (100k of them do not need to sit in memory together). */
export function* benchContents(count: number, seed: number): Generator<BenchContent> {
  const channels = benchChannels(seed);
  const news = subtreeOf(channels, NEWS_CHANNEL_ID);
  const newsSet = new Set(news);
  const rest = channels.filter((c) => !newsSet.has(c.id)).map((c) => c.id);
  const next = seededRandom(seed);
  for (let i = 0; i < count; i++) yield benchContent(i, next, news, rest);
}

export interface ImportFileOptions {
  contents: number;
  seed: number;
  /** An all-scopes key for the load generator, imported like any other key. */
  apiKey: string;
}

/** Writes the import file (`{ sites, channels, apiKeys, contents }`) as a stream. */
export async function writeImportFile(path: string, options: ImportFileOptions): Promise<void> {
  const out = createWriteStream(path);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const head = {
    sites: [{ id: SITE_ID, siteDir: 'bench', siteName: 'Bench', isRoot: true }],
    channels: benchChannels(options.seed),
    apiKeys: [{ title: 'bench', key: options.apiKey, scopes: [...SCOPES] }],
  };
  await write(`${JSON.stringify(head).slice(0, -1)},"contents":[`);
  let first = true;
  let chunk = '';
  for (const content of benchContents(options.contents, options.seed)) {
    chunk += (first ? '' : ',') + JSON.stringify(content);
    first = false;
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(`${chunk}]}`);
  out.end();
  await once(out, 'finish');
}
