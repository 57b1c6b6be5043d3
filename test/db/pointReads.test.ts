import { afterAll, beforeAll, expect, test } from '@jest/globals';
import pg from 'pg';
import { createDb } from '../../src/db/client.ts';
import { postgresPointReads } from '../../src/db/pointReads.ts';
import { Prisma } from '../../src/generated/prisma/sqlite/client.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/database.ts';

/*
 * The point reads (src/db/pointReads.ts) return Prisma's rows: every column of the model, with the
 * model's types (booleans, dates, nulls, numbers), in the model's order, on both databases.
 */

let database: TestDatabase;
let siteId: number;
let channelId: number;
let otherChannelId: number;
const big = 'Ünïcödé body line with "quotes", \\ and 𝄞.\n'.repeat(4000);

beforeAll(async () => {
  database = await createTestDatabase();
  const { db } = database.handle;
  const site = await db.site.create({ data: { siteDir: 'point', siteName: 'Point' } });
  siteId = site.id;
  const channel = await db.channel.create({ data: { guid: 'c1', siteId, channelName: 'One' } });
  channelId = channel.id;
  const other = await db.channel.create({ data: { guid: 'c2', siteId, channelName: 'Two' } });
  otherChannelId = other.id;
});
afterAll(() => database.drop());

const reads = () => database.handle.reads;

async function both(id: number, site = siteId, channel = channelId) {
  const { db } = database.handle;
  const prisma = await db.content.findFirst({
    where: { id, siteId: site, channelId: channel, recycled: false },
  });
  const raw = await reads().content(id, site, channel);
  return { prisma, raw };
}

test('a content with every column set reads the same as through Prisma, field by field', async () => {
  const { db } = database.handle;
  const content = await db.content.create({
    data: {
      guid: 'full',
      siteId,
      channelId,
      adminId: 3,
      lastEditAdminId: 4,
      userId: 5,
      taxis: -7,
      groupNames: 'a,b',
      tagNames: 'x',
      sourceId: 2147483647,
      referenceId: -2147483648,
      templateId: 9,
      checked: true,
      checkedLevel: 2,
      hits: 11,
      hitsByDay: 12,
      hitsByWeek: 13,
      hitsByMonth: 14,
      lastHitsDate: new Date('2025-02-03T04:05:06.789Z'),
      downloads: 15,
      imageUrlCount: 1,
      videoUrlCount: 2,
      fileUrlCount: 3,
      title: 'Title ✓',
      subTitle: 'Sub',
      imageUrl: '/i.png',
      videoUrl: '/v.mp4',
      fileUrl: '/f.pdf',
      body: big,
      summary: 'Sum',
      author: 'Au',
      source: 'So',
      top: true,
      recommend: false,
      hot: true,
      color: false,
      linkType: 'LinkNoRelatedToChannelAndContent',
      linkUrl: 'https://example.com/a?b=c',
      addUserName: 'admin',
      lastEditUserName: 'editor',
      writingUserName: 'writer',
      addDate: new Date('1999-12-31T23:59:59.999Z'),
      createdDate: new Date('2000-01-01T00:00:00.000Z'),
      lastModifiedDate: new Date('2026-11-24T12:34:56.001Z'),
      lastEditDate: new Date('1970-01-01T00:00:00.000Z'),
      settings: '{"k":"v"}',
    },
  });
  const { prisma, raw } = await both(content.id);
  expect(prisma).not.toBeNull();
  expect(raw).toStrictEqual(prisma);
  // The same columns in the same order (the model's), so the answers serialise identically.
  expect(Object.keys(raw ?? {})).toEqual(Object.keys(prisma ?? {}));
  expect(Object.keys(raw ?? {})).toEqual(Object.values(Prisma.ContentScalarFieldEnum));
  expect(raw?.body).toBe(big);
  expect(raw?.lastHitsDate).toEqual(new Date('2025-02-03T04:05:06.789Z'));
  expect(raw?.lastEditDate).toEqual(new Date(0));
  expect(raw?.top).toBe(true);
  expect(raw?.recommend).toBe(false);
  expect(raw?.sourceId).toBe(2147483647);
  expect(raw?.referenceId).toBe(-2147483648);
});

test('nulls, defaults and false flags read the same as through Prisma', async () => {
  const { db } = database.handle;
  const content = await db.content.create({ data: { guid: 'bare', siteId, channelId } });
  const { prisma, raw } = await both(content.id);
  expect(raw).toStrictEqual(prisma);
  expect(raw?.linkUrl).toBeNull();
  expect(raw?.lastHitsDate).toBeNull();
  expect(raw?.recycledDate).toBeNull();
  expect(raw?.checked).toBe(false);
  expect(raw?.addDate).toBeInstanceOf(Date);
});

test('another channel, another site, a missing id and the recycle bin read as no content', async () => {
  const { db } = database.handle;
  const content = await db.content.create({ data: { guid: 'gone', siteId, channelId } });
  expect((await both(content.id, siteId, otherChannelId)).raw).toBeNull();
  expect((await both(content.id, siteId + 1000, channelId)).raw).toBeNull();
  expect((await both(content.id + 1000)).raw).toBeNull();
  await db.content.update({
    where: { id: content.id },
    data: { recycled: true, recycledDate: new Date('2026-01-01T00:00:00.000Z') },
  });
  expect(await both(content.id)).toEqual({ prisma: null, raw: null });
});

test('an API key reads the same as through Prisma, with and without its optional dates and limit', async () => {
  const { db } = database.handle;
  const full = await db.apiKey.create({
    data: {
      title: 'full',
      digest: 'a'.repeat(64),
      scopes: 'Contents,STL',
      lastUsedAt: new Date('2026-03-04T05:06:07.008Z'),
      expiresAt: new Date('2030-01-01T00:00:00.000Z'),
      revokedAt: new Date('2026-05-06T07:08:09.010Z'),
      rateLimitPerMinute: 120,
    },
  });
  const bare = await db.apiKey.create({ data: { title: 'bare', digest: 'b'.repeat(64), scopes: '' } });
  for (const key of [full, bare]) {
    const prisma = await db.apiKey.findUnique({ where: { digest: key.digest } });
    const raw = await reads().apiKeyByDigest(key.digest);
    expect(raw).toStrictEqual(prisma);
    expect(raw).toStrictEqual(key);
  }
  expect(await reads().apiKeyByDigest('c'.repeat(64))).toBeNull();
});

test('a write through Prisma is seen by the next point read', async () => {
  const { db } = database.handle;
  const content = await db.content.create({ data: { guid: 'fresh', siteId, channelId, title: 'before' } });
  expect((await reads().content(content.id, siteId, channelId))?.title).toBe('before');
  await db.content.update({ where: { id: content.id }, data: { title: 'after', hot: true } });
  const { prisma, raw } = await both(content.id);
  expect(raw?.title).toBe('after');
  expect(raw).toStrictEqual(prisma);
});

test('a fresh client reads before its first Prisma query, and its reads are reported to onQuery', async () => {
  const seen: string[] = [];
  const { db, reads: fresh } = await createDb(database.url, { onQuery: (sqlText) => seen.push(sqlText) });
  try {
    const first = await database.handle.db.content.findFirst({ where: { guid: 'full' } });
    const raw = await fresh.content(first?.id ?? 0, siteId, channelId);
    expect(raw).toStrictEqual(first);
    expect(seen.some((text) => text.startsWith('SELECT') && text.includes('"Content"'))).toBe(true);
  } finally {
    await db.$disconnect();
  }
});

(testServerUrl() === undefined ? test.skip : test)(
  'PostgreSQL: a client whose only queries were point reads ends their connection when it disconnects',
  async () => {
    const { db: main } = database.handle;
    const connections = async () => {
      const [row] = await main.$queryRawUnsafe<{ n: number }[]>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()',
      );
      return row?.n ?? 0;
    };
    const before = await connections();
    const { db, reads: fresh } = await createDb(database.url);
    expect(await fresh.content(-1, siteId, channelId)).toBeNull();
    expect(await connections()).toBe(before + 1);
    await db.$disconnect();
    // The server lists a backend until it has exited: wait for that, not for a set time.
    let after = await connections();
    for (let tries = 0; after > before && tries < 200; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await connections();
    }
    expect(after).toBe(before);
  },
);

test("a site's channels read the same as through Prisma, in taxis then id order, with approved contents", async () => {
  const { db } = database.handle;
  const site = await db.site.create({ data: { siteDir: 'tree', siteName: 'Tree' } });
  const root = await db.channel.create({
    data: {
      guid: 't-root',
      siteId: site.id,
      channelName: 'Root',
      taxis: 5,
      extras: '{"isChannelAddable":false}',
    },
  });
  const child = await db.channel.create({
    data: {
      guid: 't-child',
      siteId: site.id,
      parentId: root.id,
      channelName: 'Child ✓',
      indexName: 'child',
      parentsPath: String(root.id),
      parentsCount: 1,
      groupNames: 'a,b',
      listColumns: 'title',
      isCreateChannelIfContentChanged: false,
      createChannelIdsIfContentChanged: '1,2',
      addDate: new Date('2024-05-06T07:08:09.123Z'),
    },
  });
  await db.channel.create({
    data: { guid: 't-tie', siteId: site.id, parentId: root.id, channelName: 'Tie', taxis: 5 },
  });
  await db.content.create({
    data: {
      guid: 't-c1',
      siteId: site.id,
      channelId: child.id,
      title: 'Approved',
      checked: true,
      checkedLevel: 1,
    },
  });
  await db.content.create({
    data: {
      guid: 't-c2',
      siteId: site.id,
      channelId: child.id,
      title: 'Pending',
      checked: false,
      checkedLevel: 0,
    },
  });
  const prisma = await db.channel.findMany({
    where: { siteId: site.id },
    orderBy: [{ taxis: 'asc' }, { id: 'asc' }],
  });
  const raw = await reads().siteChannels(site.id);
  expect(raw.map(({ contentNum, ...channel }) => channel)).toStrictEqual(prisma);
  expect(raw.map((channel) => [channel.id, channel.contentNum])).toEqual(
    prisma.map((channel) => [channel.id, channel.id === child.id ? 1 : 0]),
  );
  expect(await reads().siteChannels(-1)).toEqual([]);
  // The states of the same channels, in the same order; the generation the triggers advanced.
  expect(await reads().siteChannelStates(site.id)).toStrictEqual(
    raw.map(({ id, parentId, version, contentNum }) => ({ id, parentId, version, contentNum })),
  );
  // Some of them by id, in any order; ids of no channel of the site are no rows.
  const among = await reads().siteChannelsAmong(site.id, [child.id, -5, root.id]);
  expect(among.sort((a, b) => a.id - b.id)).toStrictEqual(
    raw.filter(({ id }) => id === child.id || id === root.id).sort((a, b) => a.id - b.id),
  );
  expect(await reads().siteChannelsAmong(site.id, [])).toEqual([]);
  expect(await reads().siteChannelsAmong(-1, [child.id])).toEqual([]);
  expect(await reads().siteChannelStates(-1)).toEqual([]);
  const [stored] = await db.$queryRaw<{ generation: bigint | number }[]>`
    SELECT "generation" FROM "ContentGeneration" WHERE "siteId" = ${site.id}`;
  const generation = stored?.generation ?? 0;
  expect(Number(generation)).toBeGreaterThan(0);
  expect(await reads().siteGeneration(site.id)).toBe(String(generation));
  await db.channel.update({ where: { id: child.id }, data: { channelName: 'Child again' } });
  expect(await reads().siteGeneration(site.id)).toBe(String(BigInt(generation) + 1n));
  expect(await reads().siteGeneration(-1)).toBe('0');
});

test('rows(): a statement of varying text reads the model as Prisma does, bound values included', async () => {
  const { db } = database.handle;
  const made = await Promise.all(
    [true, false, true].map((checked, index) =>
      db.content.create({
        data: { guid: `rows-${index}`, siteId, channelId, title: `rows ${index}`, body: big, checked },
      }),
    ),
  );
  const ids = made.map(({ id }) => id);
  const prisma = await db.content.findMany({
    where: { id: { in: ids }, checked: true },
    orderBy: { id: 'asc' },
  });
  // A boolean and a list of ids among the values; the same text twice (the second from the kept statement).
  for (let round = 0; round < 2; round++) {
    const raw = await reads().rows<Record<string, unknown>>(
      Prisma.sql`SELECT * FROM "Content" WHERE "id" IN (${Prisma.join(ids)}) AND "checked" = ${true} ORDER BY "id"`,
    );
    // Field by field (`SELECT *` gives the table's column order, not the model's).
    expect(raw).toEqual(prisma);
  }
  const [total] = await reads().rows<{ n: unknown }>(
    Prisma.sql`SELECT COUNT(*) AS "n" FROM "Content" WHERE "id" IN (${Prisma.join(ids)}) AND "checked" = ${false}`,
  );
  expect(Number(total?.n)).toBe(1);
  expect(await reads().rows(Prisma.sql`SELECT "id" FROM "Content" WHERE "id" = ${-1}`)).toEqual([]);
});

test('prepared(): rows as rows() reads them; on PostgreSQL the statement is prepared (named) on its connection, once', async () => {
  const { db, provider } = database.handle;
  const made = await db.content.create({
    data: { guid: 'prepared-1', siteId, channelId, title: 'prepared', body: big, checked: true },
  });
  const statement = Prisma.sql`SELECT * FROM "Content" WHERE "id" = ${made.id} AND "siteId" = ${siteId}`;
  const expected = await reads().rows(statement);
  expect(expected).toHaveLength(1);
  for (let round = 0; round < 3; round++) expect(await reads().prepared(statement)).toEqual(expected);
  if (provider !== 'postgresql') return;
  // Sequential reads take the pool's most recently released connection: the statement prepared there.
  const preparedHere = await reads().rows<{ name: string; statement: string }>(
    Prisma.sql`SELECT "name", "statement" FROM pg_prepared_statements`,
  );
  const text = (statement as unknown as { text: string }).text;
  expect(preparedHere.filter((row) => row.statement === text)).toHaveLength(1);
  // rows() leaves its statements unnamed: a text whose plan depends on its values is planned with them.
  const adHoc = Prisma.sql`SELECT "id" FROM "Content" WHERE "title" = ${'prepared'}`;
  await reads().rows(adHoc);
  const after = await reads().rows<{ statement: string }>(
    Prisma.sql`SELECT "statement" FROM pg_prepared_statements`,
  );
  expect(after.some((row) => row.statement === (adHoc as unknown as { text: string }).text)).toBe(false);
});

test('chosen(): rows as rows() reads them; on PostgreSQL the first texts are prepared for good, later ones are not', async () => {
  const { db, provider } = database.handle;
  const made = await db.content.create({
    data: { guid: 'chosen-1', siteId, channelId, title: 'chosen', body: big, checked: true },
  });
  // Three selections' reads by id, as a request's `fields` makes them.
  const selections = [
    ['id', 'title'],
    ['id', 'body'],
    ['id', 'checked', 'addDate'],
  ].map(
    (columns) =>
      Prisma.sql`SELECT ${Prisma.raw(columns.map((column) => `"${column}"`).join(', '))} FROM "Content" WHERE "id" = ${made.id}`,
  );
  for (const statement of selections) {
    const expected = await reads().rows(statement);
    expect(expected).toHaveLength(1);
    for (let round = 0; round < 2; round++) expect(await reads().chosen(statement)).toEqual(expected);
  }
  if (provider !== 'postgresql') return;
  // A bound of two, on a pool of one connection: the first two texts are prepared on it, the third
  // is not, however often it is asked; the first two stay prepared (not made again under other names).
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  try {
    const bounded = postgresPointReads(async () => pool, pg.types, undefined, 2);
    for (let round = 0; round < 3; round++) {
      for (const statement of selections)
        expect(await bounded.chosen(statement)).toEqual(await reads().rows(statement));
    }
    const named = await bounded.rows<{ statement: string }>(
      Prisma.sql`SELECT "statement" FROM pg_prepared_statements ORDER BY "prepare_time"`,
    );
    const texts = selections.map((statement) => (statement as unknown as { text: string }).text);
    expect(named.map((row) => row.statement)).toEqual(texts.slice(0, 2));
  } finally {
    await pool.end();
  }
});
