import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { type ListContentsRequest, listContentRecords } from '../../src/domain/contents/list.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { loadFixture } from '../support/fixtures.ts';

/*
 * The list answers from at most three content queries (the page's ids, its rows by id, and the
 * count when the page alone cannot tell it) plus the site and channel lookups, whatever the
 * filters: no per-row queries; a page asked again before any write, from one (its rows). On SQLite the ids and the count run in the read thread
 * (src/db/costlyReads.ts), which reports its statements as the client does.
 */

let database: TestDatabase;
let observed: DbHandle;
const queries: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  await loadFixture(database.handle);
  observed = await createDb(database.url, { onQuery: (text) => queries.push(text) });
});
afterAll(async () => {
  await observed.db.$disconnect();
  await database.drop();
});

const everyFilter: ListContentsRequest = {
  siteId: 1,
  channelId: 1,
  checked: false,
  top: false,
  groupNames: ['featured', 'home', 'x'],
  tagNames: ['release', 'tech'],
  wheres: [
    { column: 'taxis', operator: '>=', value: '0' },
    { column: 'title', operator: 'NotLike', value: '%zzz%' },
    { column: 'id', operator: 'NotIn', value: '100,200' },
    { column: 'addDate', operator: '<', value: '2030-01-01 00:00:00' },
  ],
  orders: [{ column: 'taxis', desc: true }],
};

async function countQueries(request: ListContentsRequest) {
  queries.length = 0;
  const page = await listContentRecords(observed, request, 1000);
  const contentQueries = queries.filter((text) =>
    /FROM\s+[`"]?(main[`"]?\.)?[`"]?Content(Tally|Label)?\b/i.test(text),
  );
  return { page, contentQueries: contentQueries.length, allQueries: queries.length };
}

test.each([
  ['a partial first page (count from the page)', { ...everyFilter, groupNames: undefined, perPage: 50 }, 2],
  ['a full page (page and count)', { siteId: 1, perPage: 2 }, 3],
  ['an empty page past the end (ids, no rows, and count)', { siteId: 1, page: 50, perPage: 2 }, 2],
  [
    'every filter on a full page',
    { ...everyFilter, channelId: undefined, checked: undefined, top: undefined, perPage: 1 },
    3,
  ],
])('%s', async (_name, request, expectedContentQueries) => {
  const { page, contentQueries, allQueries } = await countQueries(request);
  expect(contentQueries).toBe(expectedContentQueries);
  // Besides the content queries: the site lookup, the channel lookup when a channel is named and,
  // for a total that ContentTally cannot sum, the stored total's look-up and, on a miss, its store.
  expect(allQueries).toBeLessThanOrEqual(expectedContentQueries + 4);
  expect(page.totalCount).toBeGreaterThanOrEqual(page.contents.length);
});

test('asked again with no write in between, such a total is not counted again', async () => {
  // A filter no other test asks for, so that the first request counts.
  const wheres = [...(everyFilter.wheres ?? []), { column: 'taxis', operator: '>', value: '-1' }];
  const request = {
    ...everyFilter,
    channelId: undefined,
    checked: undefined,
    top: undefined,
    wheres,
    perPage: 1,
  };
  const first = await countQueries(request);
  const again = await countQueries(request);
  expect(first.contentQueries).toBe(3);
  // The same page: its ids and total kept in the process (keptPicks.ts); only its rows are read.
  expect(again.contentQueries).toBe(1);
  expect(again.page).toEqual(first.page);
  // The page after it (empty: one match), which needs the total: its ids; the total is the stored one.
  expect(first.page.totalCount).toBe(1);
  const second = await countQueries({ ...request, page: 2 });
  expect(second.contentQueries).toBe(1);
  expect(second.page).toEqual({ totalCount: 1, contents: [] });
});

test('a filter or an order on a hit counter is counted every time (a view changes it, not the site)', async () => {
  const request = { siteId: 1, wheres: [{ column: 'hitsByDay', operator: '>=', value: '0' }], perPage: 1 };
  expect((await countQueries(request)).contentQueries).toBe(3);
  expect((await countQueries(request)).contentQueries).toBe(3);
  const ordered = { siteId: 1, orders: [{ column: 'hits', desc: true }], perPage: 1 };
  const sorted = { ...ordered, wheres: [{ column: 'title', operator: 'NotLike', value: '%qqq%' }] };
  expect((await countQueries(sorted)).contentQueries).toBe(3);
  expect((await countQueries(sorted)).contentQueries).toBe(3);
});

test('the page and the count agree with the data', async () => {
  const { page } = await countQueries({ ...everyFilter, groupNames: undefined, perPage: 50 });
  expect(page.contents.map((content) => content.id)).toEqual([3]);
  expect(page.totalCount).toBe(1);
});

test('emptying the table by another connection (PostgreSQL: TRUNCATE) makes stored totals unusable', async () => {
  const request = { ...everyFilter, channelId: undefined, checked: undefined, top: undefined, perPage: 1 };
  expect((await countQueries(request)).page.totalCount).toBeGreaterThan(0);
  expect((await countQueries({ ...request, page: 2 })).contentQueries).toBe(1); // the ids; the total is stored
  const other = await createDb(database.url);
  try {
    // TRUNCATE names no rows (PostgreSQL has a statement trigger for it); SQLite has no TRUNCATE,
    // and its unqualified DELETE fires the row triggers.
    if (other.provider === 'postgresql') await other.db.$executeRawUnsafe('TRUNCATE "Content" CASCADE');
    else await other.db.$executeRawUnsafe('DELETE FROM "Content"');
  } finally {
    await other.db.$disconnect();
  }
  // Past the first page, so that the empty page asks for the total (a stale store would answer it).
  const after = await countQueries({ ...request, page: 3 });
  expect(after.page).toEqual({ totalCount: 0, contents: [] });
});
