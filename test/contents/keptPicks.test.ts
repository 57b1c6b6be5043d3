import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { sql } from '../../src/db/sql.ts';
import { KEPT_PICKS, keptPick, type Picked, pickKey } from '../../src/domain/contents/keptPicks.ts';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { type Listening, listen } from '../support/server.ts';

/*
 * A list page's ids and total are kept per process under the site's data generation
 * (src/domain/contents/keptPicks.ts). Whatever writes the site's contents or channels — the
 * service, or plain writes of another process (here Prisma's client on the same database, which the
 * service does not see) — the next page is what the database holds; the rows themselves are read
 * every time, and a page ordered by hit counters is never kept. Both databases.
 */

let fixture: TestApp;
let key: string;
let server: Listening;

beforeAll(async () => {
  ({ app: fixture, key } = await startFixtureApp('all', { config: { rateLimitPerMinute: 0 } }));
  server = await listen(fixture.app);
});
afterAll(async () => {
  await server?.close();
  await fixture?.close();
});

interface Page {
  totalCount: number;
  contents: { id: number; title: string; hits: number; channelId: number }[];
}

const list = async (body: object = {}): Promise<Page> => {
  const response = await fetch(`${server.base}/api/v1/contents`, {
    method: 'POST',
    headers: { 'x-ss-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ siteId: 1, perPage: 3, ...body }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
};

/** What the database holds for the default list's first page of 3 (or of a channel subtree). */
const expected = async (channelIds?: number[]) => {
  const where = {
    siteId: 1,
    recycled: false,
    ...(channelIds !== undefined && { channelId: { in: channelIds } }),
  };
  const rows = await fixture.db.content.findMany({
    where,
    orderBy: [{ top: 'desc' }, { channelId: 'desc' }, { taxis: 'desc' }, { id: 'desc' }],
    take: 3,
    select: { id: true },
  });
  return { ids: rows.map(({ id }) => id), totalCount: await fixture.db.content.count({ where }) };
};
const idsOf = (page: Page) => page.contents.map(({ id }) => id);

describe('stl/contents keeps its picks the same way', () => {
  const stl = async (query: Record<string, string>): Promise<number[]> => {
    const params = new URLSearchParams({ siteId: '1', scope: 'All', totalNum: '3', ...query });
    const response = await fetch(`${server.base}/api/v1/stl/contents?${params}`, {
      headers: { 'x-ss-api-key': key },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { value: { id: number }[] }).value.map(({ id }) => id);
  };
  /** The approved contents of site 1 in stl's Default order (top, taxis, id, each descending). */
  const approved = async () =>
    (
      await fixture.db.content.findMany({
        where: { siteId: 1, recycled: false, checked: true },
        orderBy: [{ top: 'desc' }, { taxis: 'desc' }, { id: 'desc' }],
        select: { id: true },
      })
    ).map(({ id }) => id);

  test('the Default order after a write is what the database holds', async () => {
    const before = await stl({ totalNum: '0' });
    expect(await stl({ totalNum: '0' })).toEqual(before);
    expect(before).toEqual(await approved());
    expect(before.length).toBeGreaterThan(2);
    // The last of them put on top.
    const last = before.at(-1) as number;
    await fixture.db.content.update({ where: { id: last }, data: { top: true, taxis: 1_000_000 } });
    const after = await stl({ totalNum: '0' });
    expect(after[0]).toBe(last);
    expect(after).toEqual(await approved());
  });

  test('the Hits order follows the counters', async () => {
    const before = await stl({ order: 'Hits', totalNum: '0' });
    const last = before.at(-1) as number;
    const top = await fixture.db.content.findUniqueOrThrow({ where: { id: before[0] as number } });
    await fixture.db.$executeRaw(sql`UPDATE "Content" SET "hits" = ${top.hits + 1000} WHERE "id" = ${last}`);
    expect((await stl({ order: 'Hits', totalNum: '0' }))[0]).toBe(last);
  });

  test('the Random order is never kept', async () => {
    const orders = new Set<string>();
    for (let round = 0; round < 20 && orders.size < 2; round++)
      orders.add((await stl({ order: 'Random', totalNum: '0' })).join(','));
    expect(orders.size).toBe(2);
  });
});

describe('the next page after any write to the site is what the database holds', () => {
  const writes: [string, () => Promise<unknown>][] = [
    [
      'a content created',
      () =>
        fixture.db.content.create({
          data: { siteId: 1, channelId: 4, title: 'Newest', taxis: 50, guid: randomUUID(), top: true },
        }),
    ],
    ['a content put on top', () => fixture.db.content.update({ where: { id: 7 }, data: { top: true } })],
    ['a content reordered', () => fixture.db.content.update({ where: { id: 2 }, data: { taxis: 99 } })],
    ['a content moved', () => fixture.db.content.update({ where: { id: 6 }, data: { channelId: 3 } })],
    [
      'a content recycled',
      () =>
        fixture.db.content.update({ where: { id: 7 }, data: { recycled: true, recycledDate: new Date() } }),
    ],
    ['a content deleted', () => fixture.db.content.delete({ where: { id: 5 } })],
  ];
  test.each(writes)('%s', async (_, write) => {
    const before = await list();
    expect(await list()).toEqual(before);
    await write();
    const after = await list();
    const held = await expected();
    expect(idsOf(after)).toEqual(held.ids);
    expect(after.totalCount).toBe(held.totalCount);
  });

  test("a channel moved under another changes the other's subtree", async () => {
    // Products (4) and its contents come under News (2).
    const before = await list({ channelId: 2 });
    expect(idsOf(before)).toEqual((await expected([2, 3])).ids);
    // A channel's place is its parent and its stored path (Tech, 3, is already under News).
    const products = await fixture.db.channel.findUniqueOrThrow({ where: { id: 4 } });
    const tech = await fixture.db.channel.findUniqueOrThrow({ where: { id: 3 } });
    await fixture.db.channel.update({
      where: { id: 4 },
      data: { parentId: 2, parentsPath: tech.parentsPath, parentsCount: tech.parentsCount },
    });
    try {
      const after = await list({ channelId: 2 });
      const held = await expected([2, 3, 4]);
      expect(idsOf(after)).toEqual(held.ids);
      expect(after.totalCount).toBe(held.totalCount);
    } finally {
      const { parentId, parentsPath, parentsCount } = products;
      await fixture.db.channel.update({ where: { id: 4 }, data: { parentId, parentsPath, parentsCount } });
    }
  });

  test('the rows are read every time: a changed hit counter shows on a kept page', async () => {
    const before = await list();
    const [first] = before.contents as [Page['contents'][number]];
    // A view's counter moves without advancing the site's generation (as a hit does).
    await fixture.db.$executeRaw(sql`UPDATE "Content" SET "hits" = "hits" + 5 WHERE "id" = ${first.id}`);
    const after = await list();
    expect(idsOf(after)).toEqual(idsOf(before));
    expect(after.contents[0]?.hits).toBe(first.hits + 5);
  });

  test('a page ordered by the hit counter is never kept', async () => {
    const byHits = { orders: [{ column: 'hits', desc: true }] };
    const before = await list(byHits);
    const last = before.contents.at(-1) as Page['contents'][number];
    const lead = before.contents[0]?.hits ?? 0;
    await fixture.db.$executeRaw(sql`UPDATE "Content" SET "hits" = ${lead + 100} WHERE "id" = ${last.id}`);
    const after = await list(byHits);
    expect(after.contents[0]?.id).toBe(last.id);
  });
});

describe('keptPick', () => {
  const key = (n: number) => pickKey('page', [sql`WHERE "siteId" = ${n}`, sql`ORDER BY "id"`], [3, 0]);
  const picker = () => {
    let picks = 0;
    return {
      picks: () => picks,
      pick: async (): Promise<Picked> => {
        picks += 1;
        return { ids: [picks], totalCount: picks };
      },
    };
  };

  test('a pick is kept under its generation, and picked again at another', async () => {
    const owner = {};
    const { pick, picks } = picker();
    expect(await keptPick(owner, key(1), '7', pick)).toEqual({ ids: [1], totalCount: 1 });
    expect(await keptPick(owner, key(1), '7', pick)).toEqual({ ids: [1], totalCount: 1 });
    expect(picks()).toBe(1);
    expect(await keptPick(owner, key(1), '8', pick)).toEqual({ ids: [2], totalCount: 2 });
    expect(await keptPick(owner, key(2), '8', pick)).toEqual({ ids: [3], totalCount: 3 });
    expect(picks()).toBe(3);
  });

  test('values of another type are another filter; a very long filter is never kept', async () => {
    expect(pickKey('page', [sql`WHERE "x" = ${1}`], [3, 0])).not.toBe(
      pickKey('page', [sql`WHERE "x" = ${'1'}`], [3, 0]),
    );
    expect(pickKey('page', [sql`WHERE "x" = ${1}`], [3, 0])).not.toBe(
      pickKey('page', [sql`WHERE "x" = ${1}`], [3, 3]),
    );
    const long = pickKey('page', [sql`WHERE "title" = ${'x'.repeat(5000)}`], [3, 0]);
    expect(long).toBeUndefined();
    const owner = {};
    const { pick, picks } = picker();
    await keptPick(owner, long, '1', pick);
    await keptPick(owner, long, '1', pick);
    expect(picks()).toBe(2);
  });

  test(`at most ${KEPT_PICKS} picks are kept: the least recently used goes first`, async () => {
    const owner = {};
    const { pick, picks } = picker();
    for (let n = 0; n < KEPT_PICKS; n++) await keptPick(owner, key(n), '1', pick);
    // 0 used again: 1 is now the least recently used, and goes when one more is kept.
    await keptPick(owner, key(0), '1', pick);
    await keptPick(owner, key(KEPT_PICKS), '1', pick);
    expect(picks()).toBe(KEPT_PICKS + 1);
    await keptPick(owner, key(0), '1', pick);
    expect(picks()).toBe(KEPT_PICKS + 1);
    await keptPick(owner, key(1), '1', pick);
    expect(picks()).toBe(KEPT_PICKS + 2);
  });
});
