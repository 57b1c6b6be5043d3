import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { type Sql, sql } from '../../src/db/sql.ts';
import { MARK_EVERY, markedWindow, pageMarks } from '../../src/domain/contents/counts.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import { Prisma } from '../../src/generated/prisma/sqlite/client.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/*
 * The list's faster plan (ids picked from narrow indexes, group/tag membership from ContentLabel,
 * totals from ContentTally) must answer exactly what the plain query answers: every page and
 * total here is compared, through HTTP, with a plain SELECT/COUNT(*) over Content that matches
 * the joined group/tag text and the title with LIKE (SQLite) / ILIKE (PostgreSQL). After each kind
 * of write — update, delete to the recycle bin, import, plain SQL from another connection — every
 * total and membership answer is checked again. Totals of the other filters (flags, title, groups)
 * are stored under the site's generation (ContentCount): walking every page asks for the same total
 * again, so the comparisons below check stored answers as well as fresh counts, after every write.
 */

let app: TestApp;
let key: string;
/** A second client on the same database: another process or node writing behind the service. */
let other: DbHandle;

/*
 * Site 1 (approves at level 1): 1 root ─┬─ 2 ── 4 ── 5
 *                                       └─ 3
 * Site 10:                      10 root ── 11
 */
const TREE: Record<number, number[]> = {
  1: [1, 2, 3, 4, 5],
  2: [2, 4, 5],
  3: [3],
  4: [4, 5],
  5: [5],
  10: [10, 11],
  11: [11],
};
const SITE_OF: Record<number, number> = { 1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 10: 10, 11: 10 };

const WORDS = [
  'market',
  'Market',
  'MARKET',
  '100%',
  'a_b',
  'back\\slash',
  'Émile',
  'émile',
  'straße',
  'plain',
  'Marketing',
];
const GROUPS = ['Featured', 'home', 'HOME', 'news', 'Ünï', 'a_b', '100%'];
const TAGS = ['release', 'Tech', 'tech', 'beta', 'x\\y', 'ÿes'];

function contentsFor(from: number, count: number, channels: number[]) {
  return Array.from({ length: count }, (_, index) => {
    const i = from + index;
    const channelId = channels[i % channels.length] as number;
    return {
      id: i,
      siteId: SITE_OF[channelId],
      channelId,
      title: `T${i} ${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}`,
      taxis: i % 9,
      hits: i % 13,
      checkedLevel: [1, 0, -99, 1, 2][i % 5],
      top: i % 6 === 0,
      hot: i % 3 === 0,
      recommend: i % 4 === 0,
      groupNames: [GROUPS[i % GROUPS.length], GROUPS[(i * 3) % GROUPS.length]].filter((_, k) => k <= i % 2),
      tagNames: i % 5 === 4 ? [] : [TAGS[i % TAGS.length] as string],
      addDate: '2024-01-01 08:00:00',
    };
  });
}

beforeAll(async () => {
  app = await startTestApp();
  key = await app.createApiKey(['Contents']);
  await importDocument(app, {
    sites: [
      { id: 1, siteDir: 'main', siteName: 'Main', isRoot: true, attributes: { checkContentLevel: 1 } },
      { id: 10, siteDir: 'other', siteName: 'Other' },
    ],
    channels: [
      { id: 1, siteId: 1, parentId: 0, channelName: 'Main', taxis: 0 },
      { id: 2, siteId: 1, parentId: 1, channelName: 'Two', taxis: 1 },
      { id: 3, siteId: 1, parentId: 1, channelName: 'Three', taxis: 2 },
      { id: 4, siteId: 1, parentId: 2, channelName: 'Four', taxis: 1 },
      { id: 5, siteId: 1, parentId: 4, channelName: 'Five', taxis: 1 },
      { id: 11, siteId: 10, parentId: 10, channelName: 'Eleven', taxis: 1 },
    ],
    contents: contentsFor(1, 140, [1, 2, 3, 4, 5, 11]),
  });
  other = await createDb(app.config.databaseUrl);
});
afterAll(async () => {
  await other.db.$disconnect();
  await app.close();
});

interface Filter {
  siteId: number;
  channelId?: number;
  checked?: boolean;
  hot?: boolean;
  groupNames?: string[];
  tagNames?: string[];
  titleLike?: string;
  orders?: { column: 'taxis' | 'id' | 'hits'; desc: boolean }[];
}

/** The plain query: every condition on the Content row itself, matched the way the contract says. */
function plainWhere(filter: Filter): Sql {
  const like = app.provider === 'postgresql' ? sql`ILIKE` : sql`LIKE`;
  const has = (column: Sql, names: string[]) =>
    sql`(${names
      .map(
        (name) =>
          sql`(',' || ${column} || ',') ${like} ${`%,${name.replace(/[\\%_]/g, (c) => `\\${c}`)},%`} ESCAPE '\\'`,
      )
      .reduce((a, b) => sql`${a} OR ${b}`)})`;
  let where = sql`"siteId" = ${filter.siteId} AND "recycled" = ${false}`;
  if (filter.channelId !== undefined)
    where = sql`${where} AND "channelId" IN (${Prisma.join(TREE[filter.channelId] ?? [])})`;
  if (filter.checked !== undefined) where = sql`${where} AND "checked" = ${filter.checked}`;
  if (filter.hot !== undefined) where = sql`${where} AND "hot" = ${filter.hot}`;
  if (filter.groupNames) where = sql`${where} AND ${has(sql`"groupNames"`, filter.groupNames)}`;
  if (filter.tagNames) where = sql`${where} AND ${has(sql`"tagNames"`, filter.tagNames)}`;
  if (filter.titleLike !== undefined)
    where = sql`${where} AND "title" ${like} ${filter.titleLike} ESCAPE '\\'`;
  return where;
}

async function plain(filter: Filter): Promise<{ ids: number[]; total: number }> {
  const orders = filter.orders ?? [
    { column: 'top', desc: true },
    { column: 'channelId', desc: true },
    { column: 'taxis', desc: true },
    { column: 'id', desc: true },
  ];
  const orderBy = orders.map(({ column, desc }) => `"${column}" ${desc ? 'DESC' : 'ASC'}`).join(', ');
  const where = plainWhere(filter);
  const rows = await app.db.$queryRaw<{ id: number }[]>(
    sql`SELECT "id" FROM "Content" WHERE ${where} ORDER BY ${Prisma.raw(orderBy)}${Prisma.raw(orders.some((o) => o.column === 'id') ? '' : ', "id" DESC')}`,
  );
  const [counted] = await app.db.$queryRaw<{ total: number | bigint }[]>(
    sql`SELECT COUNT(*) AS "total" FROM "Content" WHERE ${where}`,
  );
  return { ids: rows.map((row) => Number(row.id)), total: Number(counted?.total) };
}

/** Every page of the list through HTTP, with the total each page reported. */
async function served(filter: Filter, perPage: number): Promise<{ ids: number[]; totals: number[] }> {
  const { titleLike, ...rest } = filter;
  const body = {
    ...rest,
    ...(titleLike !== undefined && { wheres: [{ column: 'title', operator: 'Like', value: titleLike }] }),
    perPage,
  };
  const ids: number[] = [];
  const totals: number[] = [];
  for (let page = 1; page < 100; page++) {
    const response = await app.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({ ...body, page });
    expect([response.status, response.status === 200 ? '' : response.text]).toEqual([200, '']);
    const contents = response.body.contents as { id: number }[];
    totals.push(response.body.totalCount as number);
    ids.push(...contents.map((content) => content.id));
    if (contents.length < perPage) break;
  }
  return { ids, totals };
}

async function expectSame(filter: Filter, perPage = 7) {
  const expected = await plain(filter);
  const actual = await served(filter, perPage);
  expect(actual.ids).toEqual(expected.ids);
  for (const total of actual.totals) expect(total).toBe(expected.total);
  return expected;
}

const LIKE_PATTERNS = [
  '%market%',
  '%MARKET%',
  '%100\\%%',
  '%a\\_b%',
  '%a_b%',
  '%back\\\\slash%',
  '%émile%',
  '%ÉMILE%',
  '%STRASSE%',
  'T1_ %',
  '%',
];
const NAME_SETS = [
  ['featured'],
  ['HOME'],
  ['ünï'],
  ['a_b'],
  ['100%'],
  ['NEWS', 'Featured', 'missing'],
  ['a%'],
  ['_'],
];

describe('the list answers exactly what the plain query answers', () => {
  test('totals of every site, channel subtree and review state (the ContentTally shapes)', async () => {
    let nonEmpty = 0;
    for (const siteId of [1, 10])
      for (const channelId of [
        undefined,
        ...Object.keys(TREE)
          .map(Number)
          .filter((id) => SITE_OF[id] === siteId),
      ])
        for (const checked of [undefined, true, false]) {
          const { total } = await expectSame(
            { siteId, ...(channelId && { channelId }), ...(checked !== undefined && { checked }) },
            50,
          );
          if (total > 0) nonEmpty++;
        }
    expect(nonEmpty).toBeGreaterThan(20);
  });

  test.each(LIKE_PATTERNS)('title Like %s with channels, hot and an order', async (pattern) => {
    await expectSame(
      {
        siteId: 1,
        channelId: 2,
        hot: true,
        titleLike: pattern,
        orders: [
          { column: 'taxis', desc: true },
          { column: 'id', desc: false },
        ],
      },
      3,
    );
    await expectSame({ siteId: 1, titleLike: pattern }, 11);
  });

  test.each(NAME_SETS)('groupNames and tagNames %s', async (...names) => {
    await expectSame({ siteId: 1, groupNames: names }, 5);
    await expectSame({ siteId: 1, channelId: 4, checked: true, groupNames: names }, 5);
    await expectSame({ siteId: 1, tagNames: names.map((name) => name.replace('featured', 'TECH')) }, 5);
  });

  test('group and tag filters find what they should (the comparison is not vacuous)', async () => {
    expect((await plain({ siteId: 1, groupNames: ['HOME'] })).total).toBeGreaterThan(10);
    expect((await plain({ siteId: 1, groupNames: ['Ünï'] })).total).toBeGreaterThan(5);
    expect((await plain({ siteId: 1, tagNames: ['x\\y'] })).total).toBeGreaterThan(5);
    expect((await plain({ siteId: 1, titleLike: '%100\\%%' })).total).toBeGreaterThan(5);
  });
});

describe('wheres on groupNames/tagNames (answered from ContentLabel) agree with the name filters', () => {
  const byWheres = async (column: string, operator: string, value: string) => {
    const response = await app.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({ siteId: 1, perPage: 1000, wheres: [{ column, operator, value }] });
    expect(response.status).toBe(200);
    return (response.body.contents as { id: number }[]).map((content) => content.id);
  };

  test('=, In, != and NotIn', async () => {
    const all = (await plain({ siteId: 1 })).ids;
    const home = (await plain({ siteId: 1, groupNames: ['home'] })).ids;
    const either = (await plain({ siteId: 1, groupNames: ['featured', 'Ünï'] })).ids;
    const tech = (await plain({ siteId: 1, tagNames: ['TECH'] })).ids;
    expect(home.length).toBeGreaterThan(10);
    expect(await byWheres('groupNames', '=', ' HOME ')).toEqual(home);
    expect(await byWheres('groupNames', '!=', 'home')).toEqual(all.filter((id) => !home.includes(id)));
    expect(await byWheres('groupNames', 'In', 'featured, Ünï')).toEqual(either);
    expect(await byWheres('groupNames', 'NotIn', 'featured,Ünï')).toEqual(
      all.filter((id) => !either.includes(id)),
    );
    expect(await byWheres('tagNames', 'in', 'tech')).toEqual(tech);
  });

  test('an In list of 1,000 names (SQLite refused the 1,000 ORed LIKEs: expression tree too deep)', async () => {
    const names = Array.from({ length: 999 }, (_, i) => `missing${i}`).concat('HOME');
    const home = (await plain({ siteId: 1, groupNames: ['home'] })).ids;
    expect(await byWheres('groupNames', 'In', names.join(','))).toEqual(home);
  });
});

/** After a write: every ContentTally total and every membership answer against the plain query. */
async function expectAllExact() {
  for (const siteId of [1, 10])
    for (const channelId of [
      undefined,
      ...Object.keys(TREE)
        .map(Number)
        .filter((id) => SITE_OF[id] === siteId),
    ])
      for (const checked of [undefined, true, false])
        await expectSame(
          { siteId, ...(channelId && { channelId }), ...(checked !== undefined && { checked }) },
          200,
        );
  for (const names of [['home'], ['ünï', 'new'], ['moved']]) {
    await expectSame({ siteId: 1, groupNames: names }, 200);
    await expectSame({ siteId: 10, groupNames: names }, 200);
  }
  await expectSame({ siteId: 1, tagNames: ['tech', 'NEWTAG'] }, 200);
  // Stored totals: each filter is walked twice (the second walk answers every total from the store).
  for (const filter of STORED_FILTERS)
    for (let walk = 0; walk < 2; walk++) {
      await expectSame(filter, 3);
      const { channelId, ...rest } = filter;
      await expectSame(
        { ...rest, siteId: 10, ...(channelId !== undefined && { channelId: channelId === 1 ? 10 : 11 }) },
        3,
      );
    }
}

/** Filters whose totals ContentTally cannot sum: counted once per generation and stored. */
const STORED_FILTERS: Filter[] = [
  { siteId: 1, hot: true },
  { siteId: 1, channelId: 2, hot: true, titleLike: '%market%' },
  { siteId: 1, checked: true, titleLike: '%e%' },
  { siteId: 1, channelId: 1, groupNames: ['home', 'moved'] },
];

const update = (siteId: number, channelId: number, id: number, body: object) =>
  app.request
    .post(`/api/v1/contents/${siteId}/${channelId}/${id}/actions/update`)
    .set('X-SS-API-KEY', key)
    .send(body);

describe('totals and memberships stay exact after writes', () => {
  test('updates through the API (review state, groups, tags)', async () => {
    // Content i is in channel [1, 2, 3, 4, 5, 11][i % 6]; 2 is a draft, 3 approved.
    expect((await update(1, 3, 2, { isChecked: 'true' })).status).toBe(200);
    expect((await update(1, 4, 3, { checkedLevel: 0 })).status).toBe(200);
    expect((await update(1, 2, 1, { isChecked: 'false', groupNames: 'Moved,NEW' })).status).toBe(200);
    expect((await update(1, 5, 4, { tagNames: ['NewTag', 'tech'], groupNames: '' })).status).toBe(200);
    const approved = (await plain({ siteId: 1, checked: true })).ids;
    expect(approved).toContain(2);
    expect(approved).not.toContain(3);
    await expectAllExact();
  });

  test('deletes to the recycle bin', async () => {
    for (const [channelId, id] of [
      [1, 6],
      [2, 7],
      [4, 9],
    ] as const) {
      const response = await app.request
        .post(`/api/v1/contents/1/${channelId}/${id}/actions/delete`)
        .set('X-SS-API-KEY', key);
      expect(response.status).toBe(200);
    }
    await expectAllExact();
  });

  test('an import', async () => {
    await importDocument(app, { contents: contentsFor(500, 40, [3, 5, 11, 4]) });
    expect((await plain({ siteId: 10 })).total).toBeGreaterThan(30);
    await expectAllExact();
  });

  test('plain SQL from another connection (another process or node)', async () => {
    const db = other.db;
    await db.$executeRaw`UPDATE "Content" SET "recycled" = ${false} WHERE "id" = 7`;
    await db.$executeRaw`UPDATE "Content" SET "recycled" = ${true} WHERE "channelId" = 3 AND "hits" < 4`;
    await db.$executeRaw`UPDATE "Content" SET "checked" = ${true}, "groupNames" = ${'moved,Home'} WHERE "id" BETWEEN 20 AND 30`;
    await db.$executeRaw`UPDATE "Content" SET "siteId" = 10, "channelId" = 11 WHERE "id" = 40`;
    await db.$executeRaw`DELETE FROM "Content" WHERE "id" IN (41, 42, 8)`;
    const now = new Date();
    await db.$executeRaw`INSERT INTO "Content" ("guid", "siteId", "channelId", "title", "checked", "groupNames", "tagNames",
      "addDate", "createdDate", "lastModifiedDate", "lastEditDate")
      VALUES (${'5b0c3e2a-0d7e-4c53-9a51-0c1f7d3e9b11'}, 1, 5, ${'raw market'}, ${true}, ${'MOVED'}, ${'newtag'}, ${now}, ${now}, ${now}, ${now})`;
    await expectAllExact();
  });
});

describe('stored totals (ContentCount) are used, and only while the site is not written', () => {
  const filter: Filter = { siteId: 1, hot: true, titleLike: '%market%' };
  const total = async (page = 1) => {
    const response = await app.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({
        siteId: 1,
        hot: true,
        wheres: [{ column: 'title', operator: 'Like', value: '%market%' }],
        perPage: 2,
        page,
      });
    expect(response.status).toBe(200);
    return response.body.totalCount as number;
  };
  /** Marks the one stored total of site 1 (the test empties the store first), so its use shows. */
  const mark = async () => {
    const changed = await other.db
      .$executeRaw`UPDATE "ContentCount" SET "count" = "count" + 1000 WHERE "siteId" = 1`;
    expect(changed).toBe(1);
  };

  test('a stored total answers until any write to the site, by any connection', async () => {
    const exact = (await plain(filter)).total;
    expect(exact).toBeGreaterThan(4);
    const writes: [string, () => Promise<unknown>][] = [
      [
        'an update of a column no filter here reads',
        () => other.db.$executeRaw`UPDATE "Content" SET "downloads" = "downloads" + 1 WHERE "id" = 13`,
      ],
      [
        'an API update',
        async () => expect((await update(1, 2, 13, { title: 'T13 market again' })).status).toBe(200),
      ],
      [
        'a channel move',
        () => other.db.$executeRaw`UPDATE "Channel" SET "parentsPath" = "parentsPath" WHERE "id" = 5`,
      ],
      ['an import', () => importDocument(app, { contents: contentsFor(900, 3, [2, 4]) })],
      ['a delete', () => other.db.$executeRaw`DELETE FROM "Content" WHERE "id" = 900`],
    ];
    for (const [what, write] of writes) {
      await other.db.$executeRaw`DELETE FROM "ContentCount"`;
      const before = (await plain(filter)).total;
      expect([what, await total()]).toEqual([what, before]);
      await mark();
      // The marked total is what the list answers: the store is read, not counted afresh.
      expect([what, await total(2)]).toEqual([what, before + 1000]);
      await write();
      // Page 3: a window not asked before at this generation (keptPicks.ts keeps picks per window).
      expect([what, await total(3)]).toEqual([what, (await plain(filter)).total]);
    }
  });

  test("a write to another site leaves a site's stored totals in use", async () => {
    await other.db.$executeRaw`DELETE FROM "ContentCount"`;
    const before = await total();
    await mark();
    await other.db.$executeRaw`UPDATE "Content" SET "downloads" = "downloads" + 1 WHERE "siteId" = 10`;
    // Another window than the first's, which this node keeps (keptPicks.ts): the store is read.
    expect(await total(2)).toBe(before + 1000);
    await other.db.$executeRaw`UPDATE "Content" SET "downloads" = "downloads" + 1 WHERE "id" = 13`;
    expect(await total(3)).toBe(before);
  });
});

describe('SQLite: a title pattern is tested on index entries', () => {
  test('the deep filtered page and its count read Content_list_title_idx, not rows', async () => {
    if (app.provider !== 'sqlite') return;
    const { compileContentQuery } = await import('../../src/domain/contents/query.ts');
    const { whereNow, orderBy } = compileContentQuery(
      {
        siteId: 1,
        channels: { channelId: 2, scope: 'SelfAndDescendants' },
        hot: true,
        wheres: [{ column: 'title', operator: 'Like', value: '%market%' }],
        orders: [
          { column: 'taxis', desc: true },
          { column: 'id', desc: false },
        ],
      },
      'sqlite',
    );
    const plan = async (query: Sql) =>
      (await app.db.$queryRaw<{ detail: string }[]>(sql`EXPLAIN QUERY PLAN ${query}`))
        .map((row) => row.detail)
        .join(' | ');
    const where = whereNow();
    expect(await plan(sql`SELECT "id" FROM "Content" ${where} ${orderBy} LIMIT 30 OFFSET 60`)).toContain(
      'COVERING INDEX Content_list_title_idx',
    );
    expect(await plan(sql`SELECT COUNT(*) FROM "Content" ${where}`)).toContain(
      'COVERING INDEX Content_list_title_idx',
    );
  });
});

describe('deep pages start from stored page marks (keyset), and answer exactly the plain query', () => {
  /* Site 20: 2,000 contents, so that a filter has more matches than a few marks (MARK_EVERY). */
  const SITE = 20;
  const deep = (from: number, count: number) =>
    contentsFor(from, count, [21, 22, 23]).map((content, index) => ({
      ...content,
      siteId: SITE,
      taxis: (from + index) % 97,
      hot: (from + index) % 3 !== 0,
    }));
  beforeAll(async () => {
    TREE[21] = [21, 22];
    TREE[23] = [23];
    await importDocument(app, {
      sites: [{ id: SITE, siteDir: 'deep', siteName: 'Deep' }],
      channels: [
        { id: 21, siteId: SITE, parentId: 20, channelName: 'A', taxis: 1 },
        { id: 22, siteId: SITE, parentId: 21, channelName: 'B', taxis: 1 },
        { id: 23, siteId: SITE, parentId: 20, channelName: 'C', taxis: 2 },
      ],
      contents: deep(2000, 2000),
    });
  });

  const FILTERS: Filter[] = [
    {
      siteId: SITE,
      channelId: 21,
      hot: true,
      titleLike: '%a%',
      orders: [
        { column: 'taxis', desc: true },
        { column: 'id', desc: false },
      ],
    },
    { siteId: SITE, hot: true },
    {
      siteId: SITE,
      titleLike: '%T%',
      orders: [
        { column: 'hits', desc: false },
        { column: 'taxis', desc: true },
      ],
    },
  ];

  test.each(FILTERS.map((filter, index) => [index, filter] as const))(
    'filter %i: every page, before and after writes',
    async (_, filter) => {
      const { total } = await expectSame(filter, 60);
      expect(total).toBeGreaterThan(MARK_EVERY + 60);
      // The pages past the first mark were read from stored marks.
      const [stored] = await app.db.$queryRaw<{ n: number | bigint }[]>(
        sql`SELECT COUNT(*) AS "n" FROM "ContentCount" WHERE "siteId" = ${SITE} AND "marks" <> ''`,
      );
      expect(Number(stored?.n)).toBeGreaterThan(0);
      await expectSame(filter, 60); // from the stored marks
      await other.db
        .$executeRaw`UPDATE "Content" SET "taxis" = "taxis" + 1, "hits" = "hits" + 2 WHERE "siteId" = ${SITE} AND "id" % 7 = 0`;
      await importDocument(app, { contents: deep(5000 + _ * 100, 40) });
      await other.db.$executeRaw`DELETE FROM "Content" WHERE "siteId" = ${SITE} AND "id" % 11 = 0`;
      await expectSame(filter, 60);
      await expectSame(filter, 60);
    },
  );

  test('marks are not used for a page read after a write that came after them', async () => {
    const { compileContentQuery } = await import('../../src/domain/contents/query.ts');
    const compiled = compileContentQuery({ siteId: SITE, hot: true }, app.provider);
    const keys = compiled.orderKeys;
    if (!keys) throw new Error('the default order has keys');
    const marks = await pageMarks(
      app.services,
      SITE,
      compiled.whereNow(),
      compiled.matchWhere,
      compiled.orderBy,
      keys,
    );
    if (!marks) throw new Error('the filter has matches');
    const window = markedWindow(keys, marks, SITE, MARK_EVERY + 5, 10);
    if (!window) throw new Error('a page past the first mark has a window');
    const page = () =>
      app.db.$queryRaw<{ id: number }[]>(
        sql`SELECT "id" FROM "Content" ${compiled.whereNow()} AND ${window.conditions} ${compiled.orderBy} LIMIT 10 OFFSET ${window.offset}`,
      );
    const plainPage = await app.db.$queryRaw<{ id: number }[]>(
      sql`SELECT "id" FROM "Content" ${compiled.whereNow()} ${compiled.orderBy} LIMIT 10 OFFSET ${MARK_EVERY + 5}`,
    );
    expect(plainPage.length).toBe(10);
    expect(await page()).toEqual(plainPage);
    await other.db.$executeRaw`UPDATE "Content" SET "downloads" = "downloads" + 1 WHERE "id" = 2001`;
    expect(await page()).toEqual([]);
  });
});
