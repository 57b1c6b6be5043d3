import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { MODEL_FIELDS } from '../../src/db/models.ts';
import { HIT_COLUMNS } from '../../src/domain/contents/columns.ts';
import { compileContentQuery } from '../../src/domain/contents/query.ts';
import { loadStlFixture } from '../stl/fixture.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { testServerUrl } from '../support/database.ts';

/*
 * Hits (POST /api/stl/actions/hits, at page-view rates) leave the site's generation alone, so the
 * stored totals and page marks of the site's other filters stay in use; a list whose filter or
 * order reads a hit counter is counted afresh every time, so its total follows every hit. Both
 * databases. The fixture is test/stl/fixture.ts (approved contents of site 1: 101 102 104 105 106
 * 108 110).
 */

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp({ config: { rateLimitPerMinute: 0 } });
  await loadStlFixture(app, new Date());
  key = await app.createApiKey(['Contents']);
});
afterAll(async () => {
  await app.close();
});

const hit = async (channelId: number, contentId: number) => {
  const response = await app.request.post('/api/stl/actions/hits').send({ siteId: 1, channelId, contentId });
  expect(response.status).toBe(200);
};
const generation = async () =>
  Number((await app.db.contentGeneration.findUnique({ where: { siteId: 1 } }))?.generation ?? 0);
const list = async (body: object) => {
  const response = await app.request
    .post('/api/v1/contents')
    .set('X-SS-API-KEY', key)
    .send({ siteId: 1, ...body });
  expect(response.status).toBe(200);
  return response.body as { totalCount: number; contents: { id: number; hits: number }[] };
};
const matching = (least: number) =>
  app.db.content.count({ where: { siteId: 1, recycled: false, hits: { gte: least } } });

test("a hit leaves the site's generation as it is; an update after it moves it", async () => {
  const before = await generation();
  await hit(11, 101);
  await hit(11, 101);
  expect(await generation()).toBe(before);
  // The hit's mark (PostgreSQL) ends with its own statement: the next write advances as always.
  const update = await app.request
    .post('/api/v1/contents/1/11/101/actions/update')
    .set('X-SS-API-KEY', key)
    .send({ title: 'Read often' });
  expect(update.status).toBe(200);
  expect(await generation()).toBeGreaterThan(before);
});

test("another filter's stored total stays in use across hits, and stays right", async () => {
  const titled = { wheres: [{ column: 'title', operator: 'Like', value: '%o%' }], perPage: 1 };
  const first = await list(titled);
  const expected = await app.db.content.count({
    where: { siteId: 1, recycled: false, title: { contains: 'o' } },
  });
  expect(first.totalCount).toBe(expected);
  const stored = await app.db.contentCount.count({ where: { siteId: 1, generation: await generation() } });
  expect(stored).toBeGreaterThan(0);
  await hit(11, 102);
  // Still filed under the current generation: the next request reads it instead of counting.
  expect(await app.db.contentCount.count({ where: { siteId: 1, generation: await generation() } })).toBe(
    stored,
  );
  expect((await list(titled)).totalCount).toBe(expected);
});

test('a filter on a hit counter is counted afresh: its total follows every hit', async () => {
  // One match before the hit, so that its total is counted (a full page of 1) and could be stored.
  await app.db.content.update({ where: { id: 101 }, data: { hits: 5000 } });
  await app.db.content.update({ where: { id: 104 }, data: { hits: 999 } });
  const popular = { wheres: [{ column: 'hits', operator: '>=', value: '1000' }], perPage: 1 };
  const before = await list(popular);
  expect(before.totalCount).toBe(1);
  expect(before.totalCount).toBe(await matching(1000));
  await hit(12, 104);
  const after = await list(popular);
  expect(after.totalCount).toBe(before.totalCount + 1);
  expect(after.totalCount).toBe(await matching(1000));
  // Ordered by hits too: the most read first, as the counters now stand.
  const ordered = await list({ orders: [{ column: 'hits', desc: true }], perPage: 1 });
  expect(ordered.contents[0]).toMatchObject({ id: 101, hits: 5000 });
  expect((await list({ orders: [{ column: 'hits', desc: true }], perPage: 2 })).contents[1]).toMatchObject({
    id: 104,
    hits: 1000,
  });
});

test('which lists read the hit counters', () => {
  const reads = (filter: object) =>
    compileContentQuery({ siteId: 1, ...filter }, app.provider).readsHitCounters;
  for (const column of HIT_COLUMNS) {
    const value = column === 'lastHitsDate' ? '2026-01-01 00:00:00' : '1';
    expect(reads({ wheres: [{ column, operator: '>', value }] })).toBe(true);
  }
  expect(reads({ orders: [{ column: 'hitsByWeek', desc: true }] })).toBe(true);
  expect(reads({ wheres: [{ column: 'title', operator: 'Like', value: '%a%' }] })).toBe(false);
  expect(reads({ orders: [{ column: 'addDate', desc: true }] })).toBe(false);
  expect(reads({ orders: 'random' })).toBe(false);
});

(testServerUrl() ? describe.skip : describe)('SQLite', () => {
  test('the generation trigger watches every column of Content but the hit counters and the version', async () => {
    const [trigger] = await app.db.$queryRaw<{ sql: string }[]>`
      SELECT "sql" FROM "sqlite_master" WHERE "type" = 'trigger' AND "name" = 'Content_generation_update'`;
    const watched = /AFTER UPDATE OF([\s\S]*?)\bON "Content"/.exec(trigger?.sql ?? '')?.[1] ?? '';
    const columns = [...watched.matchAll(/"([^"]+)"/g)].map((match) => match[1]).sort();
    const expected = MODEL_FIELDS.Content.filter(
      (column) => column !== 'version' && !(HIT_COLUMNS as readonly string[]).includes(column),
    ).sort();
    expect(columns).toEqual(expected);
  });
});
