import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  benchChannels,
  benchContents,
  COMMON_WORD,
  NEWS_CHANNEL_ID,
  SITE_ID,
  subtreeOf,
  writeImportFile,
} from '../../bench/generate.ts';
import {
  answerIds,
  CODING_OF,
  CREATE_TITLE,
  floorAnswer,
  SCENARIOS,
  type ScenarioName,
  sameCreate,
  sameHits,
  serviceRequest,
} from '../../bench/scenarios.ts';
import { type FloorQueries, floorQueries, openSql, type ScenarioParams, type Sql } from '../../bench/sql.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { scratchPrefix } from '../support/run.ts';

/*
 * The benchmark's guard, as a test: on a small generated data set, floor C's hand-written SQL and the
 * service (over HTTP) give the same ids in the same order, and the same totals, for every scenario.
 * If they drift apart, the benchmark's floor no longer answers the service's question.
 */

const CONTENTS = 400;
const KEY = 'bench-test-key-0123456789abcdef0123456789';
let app: TestApp;
let sql: Sql;
let floor: FloorQueries;
let params: ScenarioParams;
let folder: string;

beforeAll(async () => {
  app = await startTestApp();
  folder = await mkdtemp(scratchPrefix('bench'));
  const file = join(folder, 'contents.json');
  await writeImportFile(file, { contents: CONTENTS, seed: 7, apiKey: KEY });
  await importDocument(app, JSON.parse(await readFile(file, 'utf8')));
  sql = openSql(app.config.databaseUrl, 2);
  const middle = Math.ceil(CONTENTS / 2);
  const contents = [...benchContents(CONTENTS, 7)];
  const target = contents[middle - 1]!;
  // Ids follow the generator's order; the viewed content is approved and outside the News subtree.
  const news = new Set(subtreeOf(benchChannels(7), NEWS_CHANNEL_ID));
  const viewed = contents.findIndex((c) => c.checkedLevel >= 1 && !news.has(c.channelId));
  params = {
    siteId: SITE_ID,
    perPage: 7,
    contentId: middle,
    contentChannelId: target.channelId,
    updateTitle: `${target.title} (edited)`,
    subtreeId: NEWS_CHANNEL_ID,
    word: COMMON_WORD,
    deepPage: 1,
    stlChannelId: NEWS_CHANNEL_ID,
    stlTotal: 12,
    hitsContentId: viewed + 1,
    hitsChannelId: contents[viewed]!.channelId,
  };
  // The last page that still has rows, as the benchmark picks on small data sets.
  const { totalCount } = await floorQueries(sql, params).filteredDeep();
  params.deepPage = Math.ceil(totalCount / params.perPage);
  floor = floorQueries(sql, params);
});

afterAll(async () => {
  await sql?.close();
  await app?.close();
  await rm(folder, { recursive: true, force: true });
});

async function service(name: ScenarioName): Promise<unknown> {
  const request = serviceRequest(name, params);
  const call =
    request.method === 'GET'
      ? app.request.get(request.path)
      : app.request.post(request.path).set('content-type', 'application/json').send(request.body);
  const response = await call.set({ ...request.headers, 'x-ss-api-key': KEY });
  expect(response.status).toBe(200);
  // The compressed lists are answered in the coding they ask for (and decoded here); the others
  // in whatever supertest's own Accept-Encoding gets.
  const coding = CODING_OF[name];
  if (coding !== undefined) expect(response.headers['content-encoding']).toBe(coding);
  return response.body;
}

describe('bench data set', () => {
  test('is the same for the same seed and has the shape the scenarios need', () => {
    expect([...benchContents(50, 3)]).toEqual([...benchContents(50, 3)]);
    expect([...benchContents(5, 3)]).not.toEqual([...benchContents(5, 4)]);
    const channels = benchChannels(7);
    expect(channels).toHaveLength(200);
    expect(subtreeOf(channels, NEWS_CHANNEL_ID)).toHaveLength(15);
    const all = [...benchContents(2000, 7)];
    const share = (ok: (c: (typeof all)[number]) => boolean) => all.filter(ok).length / all.length;
    expect(share((c) => c.title.toLowerCase().includes(COMMON_WORD))).toBeGreaterThan(0.5);
    expect(share((c) => c.hot)).toBeGreaterThan(0.3);
    expect(share((c) => c.body.length >= 2000 && c.body.length < 2300)).toBe(1);
    expect(new Set(all.map((c) => c.checkedLevel))).toEqual(new Set([1, 2, 0, -99, -1]));
    expect(new Set(all.flatMap((c) => c.groupNames)).size).toBe(20);
    expect(new Set(all.flatMap((c) => c.tagNames)).size).toBe(50);
  });
});

describe('floor C answers what the service answers', () => {
  test('the filtered deep page has rows and a total over one page', async () => {
    expect(params.deepPage).toBeGreaterThan(1);
  });

  test.each(SCENARIOS.filter((name) => name !== 'update' && name !== 'create' && name !== 'hits'))(
    '%s: same ids and total',
    async (name) => {
      const ours = answerIds(await service(name));
      // The body matters only to the update (not here).
      const theirs = answerIds(JSON.parse(JSON.stringify(await floorAnswer(name, floor, ''))));
      expect(ours.ids.length).toBeGreaterThan(0);
      expect(theirs).toEqual(ours);
    },
  );

  test('update: both write the title to the same content', async () => {
    const ours = (await service('update')) as { id: number; title: string };
    expect(ours).toMatchObject({ id: params.contentId, title: params.updateTitle });
    const theirs = await floor.update(`${params.updateTitle} again`);
    expect(theirs).toMatchObject({ id: params.contentId, title: `${params.updateTitle} again` });
    const read = (await service('get-one')) as { id: number; title: string };
    expect(read.title).toBe(`${params.updateTitle} again`);
  });

  test('hits: each counts one view of the same content, with the same counters', async () => {
    const counters = () =>
      app.db.content.findUniqueOrThrow({
        where: { id: params.hitsContentId },
        select: { hits: true, hitsByDay: true, hitsByWeek: true, hitsByMonth: true, version: true },
      });
    const before = await counters();
    const ours = await service('hits');
    expect(ours).toEqual({ value: before.hits + 1 });
    const theirs = await floor.hits();
    expect(sameHits(ours, theirs)).toMatchObject({ ok: true });
    expect(sameHits(theirs, await service('hits'))).toMatchObject({ ok: true });
    // Each side's statement counted exactly one view and bumped the row's version once.
    const after = await counters();
    expect(after.hits).toBe(before.hits + 3);
    expect(after.version).toBe(before.version + 3);
    expect(sameHits(ours, ours).ok).toBe(false);
  });

  test('create: each adds the next content at the top of the same channel', async () => {
    const ours = (await service('create')) as { id: number; channelId: number; title: string };
    expect(ours).toMatchObject({ channelId: params.contentChannelId, title: CREATE_TITLE });
    const theirs = await floor.create(CREATE_TITLE);
    expect(sameCreate(ours, theirs)).toMatchObject({ ok: true });
    // And the service's next one follows floor C's.
    expect(sameCreate(theirs, await service('create'))).toMatchObject({ ok: true });
    // A mismatch is seen: the same answer twice is not the next content.
    expect(sameCreate(ours, ours).ok).toBe(false);
  });
});
