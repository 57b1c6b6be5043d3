import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { operations } from '../../client/src/index.ts';
import { sql } from '../../src/db/sql.ts';
import { compileContentQuery } from '../../src/domain/contents/query.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

/*
 * stl/contents in the Hits order, which an index walk serves (hits desc, id desc from the top of the
 * approved entries, the channel tested on each entry: migration stl_hits_index): the answers are
 * those of the definition — approved contents of the scope outside the recycle bin, by hits desc then
 * id desc — worked out here from the catalogue itself, through ties in hits, contents that are pending
 * or recycled with the most hits, every channel scope and windows that cut through a tie.
 */

interface Row {
  id: number;
  channelId: number;
  hits: number;
  /** 1: approved (site level 1); 0: pending. */
  checkedLevel: number;
  recycled?: boolean;
  siteId?: number;
}

/**
 * Site 1:  1 ─┬─ 11 ── 12 ── 13
 *             └─ 14
 * Site 2:  2 ── 21
 */
const CHANNELS = [
  { id: 1, siteId: 1, parentId: 0, channelName: 'Home' },
  { id: 11, siteId: 1, parentId: 1, channelName: 'A' },
  { id: 12, siteId: 1, parentId: 11, channelName: 'A1' },
  { id: 13, siteId: 1, parentId: 12, channelName: 'A1a' },
  { id: 14, siteId: 1, parentId: 1, channelName: 'B' },
  { id: 21, siteId: 2, parentId: 2, channelName: 'Other' },
];
const PARENT = new Map(CHANNELS.map((c) => [c.id, c.parentId]));

const ROWS: Row[] = [
  // Four approved contents tied at 50 hits, across three channels of the subtree of 11.
  { id: 201, channelId: 11, hits: 50, checkedLevel: 1 },
  { id: 202, channelId: 12, hits: 50, checkedLevel: 1 },
  { id: 203, channelId: 13, hits: 50, checkedLevel: 1 },
  { id: 209, channelId: 11, hits: 50, checkedLevel: 1 },
  // More hits than any answer, but pending or recycled: never answered.
  { id: 204, channelId: 12, hits: 700, checkedLevel: 0 },
  { id: 205, channelId: 13, hits: 900, checkedLevel: 1, recycled: true },
  { id: 211, channelId: 11, hits: 800, checkedLevel: 0, recycled: true },
  { id: 206, channelId: 14, hits: 60, checkedLevel: 1 },
  { id: 207, channelId: 12, hits: 10, checkedLevel: 1 },
  { id: 208, channelId: 13, hits: 0, checkedLevel: 1 },
  { id: 212, channelId: 13, hits: 0, checkedLevel: 1 },
  { id: 210, channelId: 1, hits: 80, checkedLevel: 1 },
  { id: 213, channelId: 14, hits: 10, checkedLevel: 1 },
  // Another site, with the most hits of all.
  { id: 301, channelId: 21, hits: 999, checkedLevel: 1, siteId: 2 },
];

type Query = NonNullable<operations['stlListContents']['parameters']['query']>;

/** The definition: which channels a scope of `channelId` takes. */
function inScope(channelId: number, scope: Query['scope'], root: number): boolean {
  const parent = PARENT.get(channelId);
  switch (scope ?? 'Self') {
    case 'Self':
      return channelId === root;
    case 'Children':
      return parent === root;
    case 'SelfAndChildren':
      return channelId === root || parent === root;
    case 'Descendant': {
      for (let up = parent; up !== undefined && up !== 0; up = PARENT.get(up)) if (up === root) return true;
      return false;
    }
    default:
      return true;
  }
}

function expected(query: Query): number[] {
  const start = (query.startNum ?? 1) - 1;
  const rows = ROWS.filter(
    (row) =>
      (row.siteId ?? 1) === 1 &&
      row.checkedLevel === 1 &&
      !row.recycled &&
      inScope(row.channelId, query.scope, query.channelId ?? 1),
  ).sort((a, b) => b.hits - a.hits || b.id - a.id);
  const window = query.totalNum ? rows.slice(start, start + query.totalNum) : rows.slice(start);
  return window.map((row) => row.id);
}

let app: TestApp;
let typed: TypedClient;

beforeAll(async () => {
  app = await startTestApp();
  await importDocument(app, {
    sites: [
      { id: 1, siteDir: 'main', siteName: 'Main', isRoot: true },
      { id: 2, siteDir: 'other', siteName: 'Other', taxis: 2 },
    ],
    channels: CHANNELS,
    contents: ROWS.map(({ recycled: _, siteId: __, ...row }) => ({
      ...row,
      title: `Content ${row.id}`,
      addDate: '2024-01-01 08:00:00',
    })),
  });
  for (const row of ROWS.filter((r) => r.recycled))
    await app.db.content.update({
      where: { id: row.id },
      data: { recycled: true, recycledDate: new Date() },
    });
  typed = await startClient(app, await app.createApiKey(['STL']));
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

async function hitsOrder(query: Query): Promise<number[]> {
  const { data, response } = await typed.client.GET('/api/v1/stl/contents', {
    params: { query: { ...query, order: 'Hits' } },
  });
  expect(response.status).toBe(200);
  return (data?.value ?? []).map((item) => Number(item.id));
}

describe('stl/contents, order Hits', () => {
  test('the definition picks what the cases below mean to check', () => {
    // Ties at 50 cross windows, and the excluded contents would lead every scope that holds them.
    expect(expected({ channelId: 11, scope: 'SelfAndChildren' })).toEqual([209, 202, 201, 207]);
    expect(expected({ channelId: 11, scope: 'Descendant' })).toEqual([203, 202, 207, 212, 208]);
    expect(expected({ scope: 'All' })).toEqual([210, 206, 209, 203, 202, 201, 213, 207, 212, 208]);
  });

  test.each<Query>([
    { channelId: 11 },
    { channelId: 11, scope: 'Self' },
    { channelId: 13, scope: 'Self' },
    { channelId: 1, scope: 'Children' },
    { channelId: 11, scope: 'Children' },
    { channelId: 11, scope: 'SelfAndChildren' },
    { channelId: 11, scope: 'Descendant' },
    { channelId: 1, scope: 'Descendant' },
    { channelId: 12, scope: 'Descendant' },
    { channelId: 13, scope: 'Descendant' },
    { channelId: 14, scope: 'Descendant' },
    { scope: 'All' },
    // Windows that start and end inside the tie at 50 hits.
    { scope: 'All', startNum: 4, totalNum: 2 },
    { scope: 'All', startNum: 3, totalNum: 3 },
    { channelId: 1, scope: 'Descendant', startNum: 5, totalNum: 4 },
    { channelId: 11, scope: 'Descendant', startNum: 2, totalNum: 1 },
    { channelId: 11, scope: 'Descendant', startNum: 6 },
    { channelId: 1, scope: 'Descendant', totalNum: 1 },
  ])('%j', async (query) => {
    expect(await hitsOrder(query)).toEqual(expected(query));
  });

  // The service picks the plan from the counts (src/domain/stl/contents.ts); each is proven here on
  // every scope, whichever the counts would pick.
  test.each<Query>([
    { channelId: 11, scope: 'Self' },
    { channelId: 1, scope: 'Children' },
    { channelId: 11, scope: 'SelfAndChildren' },
    { channelId: 11, scope: 'Descendant' },
    { channelId: 1, scope: 'Descendant' },
    { channelId: 14, scope: 'Descendant' },
  ])("walk, scope first and the planner's choice answer alike: %j", async (query) => {
    const scope = query.scope as 'Self' | 'Children' | 'SelfAndChildren' | 'Descendant';
    for (const plan of ['walk', 'scope', undefined] as const) {
      const { matchWhere, orderBy } = compileContentQuery(
        {
          siteId: 1,
          channels: { channelId: query.channelId ?? 1, scope },
          checked: true,
          orders: [
            { column: 'hits', desc: true },
            { column: 'id', desc: true },
          ],
          plan,
        },
        app.provider,
      );
      const rows = await app.db.$queryRaw<{ id: number | bigint }[]>(
        sql`SELECT "id" FROM "Content" ${matchWhere} ${orderBy}`,
      );
      expect([plan, rows.map((row) => Number(row.id))]).toEqual([plan, expected(query)]);
    }
  });

  test('a hit moves a content to its place among the others', async () => {
    // 208 had none: 61 hits put it first of the descendants of 1 (ahead of 206's 60) and of 11.
    await app.db.content.update({ where: { id: 208 }, data: { hits: 61 } });
    expect(await hitsOrder({ channelId: 1, scope: 'Descendant', totalNum: 4 })).toEqual([208, 206, 209, 203]);
    expect(await hitsOrder({ channelId: 11, scope: 'Descendant' })).toEqual([208, 203, 202, 207, 212]);
  });
});
