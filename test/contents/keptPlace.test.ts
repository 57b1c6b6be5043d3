import { describe, expect, test } from '@jest/globals';
import { sql } from '../../src/db/sql.ts';
import { type ListContentsRequest, listContentRecords } from '../../src/domain/contents/list.ts';
import { observedStlDatabase } from '../stl/fixture.ts';

/*
 * The content list keeps, per process, what it read of a site and channel for a page (its
 * generation, page size and channel scope: src/domain/contents/list.ts, keptPlaces), and reads a
 * repeated page that names its size without reading the site: the generation is read with the
 * rows, and when it moved the page is read again from a fresh read of its place. Each answer is
 * compared with a fresh client's (its own kept places: none), on the database the run selects; the
 * writes go through another client, as another process's would. Fixture: test/stl/fixture.ts
 * (site 1: 11 News ── 12 Tech (index 'tech') ── 13 Deep, 14 Products, 15 News).
 */

const fixture = observedStlDatabase();
const { queries, written } = fixture;

/** The fixture.observed client's page, how many statements read the site, and a fresh client's page. */
async function page(request: ListContentsRequest) {
  queries.length = 0;
  const answer = await listContentRecords(fixture.observed, request, 1000);
  const siteReads = queries.filter((text) => /FROM "Site"/.test(text)).length;
  expect(answer).toEqual(await fixture.fresh((fresh) => listContentRecords(fresh, request, 1000)));
  return { ids: answer.contents.map(({ id }) => id), totalCount: answer.totalCount, siteReads };
}

describe('a page that names its size', () => {
  test('repeated, it reads no site; a content written meanwhile shows, from a fresh read', async () => {
    const request = { siteId: 1, perPage: 2, fields: ['id', 'title'] } satisfies ListContentsRequest;
    const first = await page(request);
    expect(first).toMatchObject({ totalCount: 8, siteReads: 1 });
    expect(await page(request)).toEqual({ ...first, siteReads: 0 });
    // Put on top, content 105 comes into the first page (as the fresh client's answer says).
    expect(first.ids).not.toContain(105);
    await written(sql`UPDATE "Content" SET "top" = ${true} WHERE "id" = 105`);
    const moved = await page(request);
    expect(moved.ids).toContain(105);
    expect(moved).toMatchObject({ totalCount: 8, siteReads: 1 });
    expect(await page(request)).toEqual({ ...moved, siteReads: 0 });
  });

  test("a channel's index moved meanwhile: the page of the channel it names now", async () => {
    const tech = { siteId: 1, index: 'tech', perPage: 5 } satisfies ListContentsRequest;
    expect(await page(tech)).toEqual({ ids: [105, 104], totalCount: 2, siteReads: 1 });
    expect(await page(tech)).toEqual({ ids: [105, 104], totalCount: 2, siteReads: 0 });
    await written(sql`UPDATE "Channel" SET "indexName" = NULL WHERE "id" = 12`);
    await written(sql`UPDATE "Channel" SET "indexName" = 'tech' WHERE "id" = 14`);
    expect(await page(tech)).toEqual({ ids: [106], totalCount: 1, siteReads: 1 });
  });

  test('a site that does not exist is a 404 every time', async () => {
    for (let attempt = 0; attempt < 2; attempt++)
      await expect(listContentRecords(fixture.observed, { siteId: 9, perPage: 2 }, 1000)).rejects.toThrow(
        'Site 9 does not exist',
      );
  });
});

test("a page of the site's size reads the site every time: its attributes change without the generation", async () => {
  const request = { siteId: 1, perPage: 0 } satisfies ListContentsRequest;
  // The fixture's site 1 has pageSize 12: all eight contents.
  expect(await page(request)).toMatchObject({ totalCount: 8, siteReads: 1 });
  expect((await page(request)).siteReads).toBe(1);
  await written(sql`UPDATE "Site" SET "attributes" = ${JSON.stringify({ pageSize: 3 })} WHERE "id" = 1`);
  const smaller = await page(request);
  expect(smaller.ids).toHaveLength(3);
  expect(smaller).toMatchObject({ totalCount: 8, siteReads: 1 });
});
