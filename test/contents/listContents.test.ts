import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { CmsClient, components } from '../../client/src/index.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { DEFAULT_ORDER_IDS, startFixtureApp } from '../support/fixtures.ts';

let app: TestApp;
let key: string;
let typed: TypedClient;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents']));
  typed = await startClient(app, key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

type ListContentsRequest = components['schemas']['ListContentsRequest'];
type Where = components['schemas']['Where'];

const send = (body: ListContentsRequest, client: CmsClient = typed.client) =>
  client.POST('/api/v1/contents', { body });
/** Site 1, 100 to a page, unless the test says otherwise. */
const list = (body: Partial<ListContentsRequest>) => send({ siteId: 1, perPage: 100, ...body });

async function ids(body: Partial<ListContentsRequest>): Promise<number[]> {
  const { data, response } = await list(body);
  expect(response.status).toBe(200);
  return data?.contents.map((content) => Number(content.id)) ?? [];
}

const where = (column: string, operator: string | undefined, value: Where['value']) => ({
  wheres: [operator === undefined ? { column, value } : { column, operator, value }],
});
const rule = (column: string, operator: string, value: string): Where => ({ column, operator, value });

describe('POST /api/v1/contents: scope and default order', () => {
  test('whole site in the default order, without recycled contents, counting all matches', async () => {
    const { data, response } = await list({});
    expect(response.status).toBe(200);
    expect(data?.totalCount).toBe(7);
    expect(data?.contents.map((c) => c.id)).toEqual(DEFAULT_ORDER_IDS);
    const first = data?.contents[0];
    expect(first).toMatchObject({
      id: 5,
      siteId: 1,
      channelId: 4,
      title: 'Product one',
      top: true,
      hits: 100,
    });
    expect(first?.addDate).toBe('2024-05-01 08:00:00');
    expect(first?.body).toBe('<p>Product one</p>');
    expect(first?.content).toBe('<p>Product one</p>');
  });

  test('channelId selects the channel and all its descendants', async () => {
    expect(await ids({ channelId: 2 })).toEqual([1, 4, 3, 2]);
    expect(await ids({ channelId: 3 })).toEqual([4, 3]);
    expect(await ids({ channelId: 1 })).toEqual(DEFAULT_ORDER_IDS);
  });

  test('index selects by the channel index name, within the site', async () => {
    expect(await ids({ index: 'news-tech' })).toEqual([4, 3]);
    expect(await ids({ index: 'products' })).toEqual([5, 6]);
    expect(await ids({ siteId: 10, index: 'news' })).toEqual([20]);
  });

  test('unknown site, channel, index, or a channel of another site are 404 problems', async () => {
    for (const body of [
      { siteId: 999 },
      { channelId: 999 },
      { index: 'nope' },
      { channelId: 11 },
      { channelId: 2, index: 'products' },
    ]) {
      const { error, response } = await list(body);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(error).toMatchObject({ status: 404, title: 'Not Found' });
      expect(error?.detail).toBe(error?.message);
    }
  });
});

describe('POST /api/v1/contents: flag, group and tag filters', () => {
  test('checked selects approved or pending contents (by the site review level)', async () => {
    expect(await ids({ checked: true })).toEqual([5, 1, 2]);
    expect(await ids({ checked: false })).toEqual([6, 4, 3, 7]);
  });

  test('each flag selects by its value', async () => {
    expect(await ids({ top: true })).toEqual([5, 1]);
    expect(await ids({ top: false })).toEqual([6, 4, 3, 2, 7]);
    expect(await ids({ recommend: true })).toEqual([2, 7]);
    expect(await ids({ hot: true })).toEqual([5, 3]);
    expect(await ids({ color: true })).toEqual([4, 7]);
    expect(await ids({ hot: true, top: true })).toEqual([5]);
  });

  test('groupNames and tagNames select contents in any of the given names', async () => {
    expect(await ids({ groupNames: ['featured'] })).toEqual([1, 2]);
    expect(await ids({ groupNames: ['home', 'featured'] })).toEqual([5, 1, 2]);
    expect(await ids({ groupNames: ['feat'] })).toEqual([]);
    expect(await ids({ tagNames: ['release'] })).toEqual([1, 3]);
    expect(await ids({ tagNames: ['tech', 'beta'] })).toEqual([3, 2]);
    expect(await ids({ tagNames: ['release'], groupNames: ['featured'] })).toEqual([1]);
  });
});

describe('POST /api/v1/contents: wheres', () => {
  test('comparison operators on integers, with = as the default operator', async () => {
    expect(await ids(where('hits', undefined, '25'))).toEqual([2]);
    expect(await ids(where('hits', '=', 25))).toEqual([2]);
    expect(await ids(where('hits', '!=', '0'))).toEqual([5, 1, 6, 3, 2, 7]);
    expect(await ids(where('hits', '>', '10'))).toEqual([5, 6, 2]);
    expect(await ids(where('hits', '>=', '10'))).toEqual([5, 1, 6, 2]);
    expect(await ids(where('hits', '<', '7'))).toEqual([4, 3]);
    expect(await ids(where('hits', '<=', '7'))).toEqual([4, 3, 7]);
  });

  test('In and NotIn split the value on commas', async () => {
    expect(await ids(where('id', 'In', '1, 3,5'))).toEqual([5, 1, 3]);
    expect(await ids(where('id', 'NotIn', '1,3,5'))).toEqual([6, 4, 2, 7]);
    expect(await ids(where('author', 'In', 'Bob,Dee'))).toEqual([5, 6, 2]);
  });

  test('Like and NotLike take SQL wildcards and ignore case; operator names ignore case', async () => {
    expect(await ids(where('title', 'Like', 'tech%'))).toEqual([4, 3]);
    expect(await ids(where('title', 'like', '%PRODUCT%'))).toEqual([5, 6]);
    expect(await ids(where('title', 'NotLike', '%E%'))).toEqual([6]);
    expect(await ids(where('author', 'notlike', 'ann'))).toEqual([5, 6, 4, 2]);
    expect(await ids(where('title', 'Like', 'Tech_notes'))).toEqual([4]);
    expect(await ids(where('title', 'Like', '%100\\%'))).toEqual([3]);
    expect(await ids(where('title', 'Like', 'Tech\\_%'))).toEqual([4]);
    // Patterns longer than 16 characters: PostgreSQL runs them as regular expressions (the signs of
    // which are literal here), with the same answers.
    expect(await ids(where('title', 'Like', `TECH_notes${'%'.repeat(10)}`))).toEqual([4]);
    expect(await ids(where('title', 'Like', `%100\\%${'%'.repeat(12)}`))).toEqual([3]);
    expect(await ids(where('title', 'NotLike', `%.*(e)[?]$^|+{}${'%'.repeat(4)}`))).toEqual(
      DEFAULT_ORDER_IDS,
    );
  });

  test('dates, booleans, nullable text and list columns', async () => {
    expect(await ids(where('addDate', '>=', '2024-05-01 08:00:00'))).toEqual([5, 6, 7]);
    expect(await ids(where('addDate', '<', '2024-02-01'))).toEqual([1]);
    expect(await ids(where('top', '=', 'true'))).toEqual([5, 1]);
    expect(await ids(where('checked', '!=', true))).toEqual([6, 4, 3, 7]);
    expect(await ids(where('linkUrl', '!=', ''))).toEqual([4]);
    expect(await ids(where('linkUrl', '=', ''))).toEqual([5, 1, 6, 3, 2, 7]);
    expect(await ids(where('groupNames', '=', 'home'))).toEqual([5, 2]);
    expect(await ids(where('tagNames', 'NotIn', 'release,beta'))).toEqual([5, 6, 4, 7]);
  });

  test('several wheres must all hold', async () => {
    expect(
      await ids({
        wheres: [
          { column: 'hits', operator: '>', value: '5' },
          { column: 'author', value: 'Ann' },
        ],
      }),
    ).toEqual([1, 7]);
  });

  test('values are bound, never spliced into SQL', async () => {
    expect(await ids(where('title', '=', "x' OR '1'='1"))).toEqual([]);
    expect(await ids(where('author', 'In', "Ann') OR 1=1 --"))).toEqual([]);
    expect(await ids(where('title', 'Like', '%\'; DROP TABLE "Content"; --'))).toEqual([]);
    expect(await ids({})).toEqual(DEFAULT_ORDER_IDS);
  });

  test('unknown columns, bad operators and mistyped values are 400 problems naming the rule', async () => {
    const unknownColumn = await list(where('nope', '=', '1'));
    expect(unknownColumn.response.status).toBe(400);
    expect(unknownColumn.error?.detail).toContain("unknown column 'nope'");
    expect(unknownColumn.error?.detail).toContain('title');
    expect(unknownColumn.error?.errors).toEqual([expect.objectContaining({ path: '/body/wheres/0' })]);

    const badOperator = await list(where('hits', 'between', '1'));
    expect(badOperator.response.status).toBe(400);
    expect(badOperator.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    for (const rule of [
      where('hits', '>', 'ten'),
      where('addDate', '>', 'yesterday'),
      where('hits', 'Like', '%1%'),
      where('top', '>', 'true'),
      where('id', 'In', '1,x'),
    ]) {
      const { error, response } = await list(rule);
      expect(response.status).toBe(400);
      expect(error?.errors).toEqual([expect.objectContaining({ path: '/body/wheres/0' })]);
    }
  });

  test.each<[string, Partial<ListContentsRequest>, string]>([
    ['21 where rules', { wheres: Array.from({ length: 21 }, () => rule('id', '>', '0')) }, '/body/wheres'],
    ['101 group names', { groupNames: Array.from({ length: 101 }, (_, i) => `g${i}`) }, '/body/groupNames'],
    ['a 256-character tag name', { tagNames: ['t'.repeat(256)] }, '/body/tagNames/0'],
    [
      'an In list of 1,001 items',
      { wheres: [rule('id', 'In', Array.from({ length: 1001 }, (_, i) => i).join(','))] },
      '/body/wheres/0',
    ],
    [
      'a Like pattern of 1,001 characters',
      { wheres: [rule('title', 'Like', `%${'a'.repeat(999)}%`)] },
      '/body/wheres/0',
    ],
    [
      'a Like pattern that ends in a lone escape character',
      { wheres: [rule('title', 'Like', 'tech\\')] },
      '/body/wheres/0',
    ],
    [
      'a value of 20,001 characters',
      { wheres: [rule('title', '=', 'a'.repeat(20_001))] },
      '/body/wheres/0/value',
    ],
  ])('%s: a 400 before any SQL', async (_name, body, path) => {
    const { error, response } = await list(body);
    expect(response.status).toBe(400);
    expect(error?.errors?.map((problem) => problem.path)).toContain(path);
  });

  test('within the limits: 20 rules, 100 names, 1,000 In items and a 1,000-character pattern', async () => {
    const { data, response } = await list({
      wheres: [
        ...Array.from({ length: 18 }, () => rule('id', '>', '0')),
        rule('id', 'In', Array.from({ length: 1000 }, (_, i) => i + 1).join(',')),
        rule('title', 'NotLike', `%${'z'.repeat(998)}%`),
      ],
      groupNames: [...Array.from({ length: 99 }, (_, i) => `g${i}`), 'featured'],
    });
    expect(response.status).toBe(200);
    expect(data?.contents.map((content) => content.id)).toEqual([1, 2]);
  });

  test('integer values beyond int32 are a 400 on both databases, inside In too', async () => {
    for (const rule of [where('hits', '>', '2147483648'), where('id', 'In', '1,-2147483649')]) {
      const { error, response } = await list(rule);
      expect(response.status).toBe(400);
      expect(error?.errors).toEqual([
        expect.objectContaining({
          path: '/body/wheres/0',
          message: expect.stringContaining('-2147483648 to 2147483647'),
        }),
      ]);
    }
    expect((await list(where('hits', '<', '2147483647'))).response.status).toBe(200);
  });

  test('a date that is not on the calendar is a 400 naming the rule, in either date form', async () => {
    for (const value of [
      '2024-02-30 00:00:00',
      '2023-02-29',
      '2024-01-01 24:00:00',
      '2024-02-30T00:00:00Z',
      '2023-02-29T10:00:00+08:00',
      '2024-04-31T12:00:00.000Z',
      '2024-01-01T10:00:60Z',
    ]) {
      const { error, response } = await list(where('addDate', '>=', value));
      expect([value, response.status]).toEqual([value, 400]);
      expect(error?.errors).toEqual([
        { path: '/body/wheres/0', message: "must be a date-time 'yyyy-MM-dd HH:mm:ss' for column 'addDate'" },
      ]);
    }
    expect(await ids(where('addDate', '>=', '2024-02-29T00:00:00Z'))).toEqual([5, 6, 4, 3, 7]);
  });
});

describe('POST /api/v1/contents: orders and paging', () => {
  test('orders sort by the given columns, ties broken by id descending', async () => {
    expect(await ids({ orders: [{ column: 'hits', desc: false }] })).toEqual([4, 3, 7, 1, 2, 6, 5]);
    expect(
      await ids({
        orders: [
          { column: 'author', desc: false },
          { column: 'hits', desc: true },
        ],
      }),
    ).toEqual([1, 7, 5, 2, 4, 6, 3]);
    expect(await ids({ orders: [{ column: 'checked', desc: true }] })).toEqual([5, 2, 1, 7, 6, 4, 3]);
  });

  test('unknown order column is a 400 problem', async () => {
    const { error, response } = await list({ orders: [{ column: 'nope', desc: true }] });
    expect(response.status).toBe(400);
    expect(error?.errors).toEqual([expect.objectContaining({ path: '/body/orders/0/column' })]);
  });

  test('page and perPage window the list; totalCount still counts all matches', async () => {
    const second = (await list({ page: 2, perPage: 3 })).data;
    expect(second?.totalCount).toBe(7);
    expect(second?.contents.map((c) => c.id)).toEqual([4, 3, 2]);
    const last = (await list({ page: 3, perPage: 3 })).data;
    expect(last?.contents.map((c) => c.id)).toEqual([7]);
    expect(last?.totalCount).toBe(7);
    const past = (await list({ page: 9, perPage: 3 })).data;
    expect(past).toEqual({ totalCount: 7, contents: [] });
    const exact = (await list({ page: 1, perPage: 7 })).data;
    expect(exact?.totalCount).toBe(7);
    expect(exact?.contents).toHaveLength(7);
  });

  test('page 0 is the first page; perPage 0 or absent is the site pageSize', async () => {
    const { data, response } = await send({ siteId: 1, page: 0 });
    expect(response.status).toBe(200);
    expect(data?.totalCount).toBe(7);
    expect(data?.contents.map((c) => c.id)).toEqual(DEFAULT_ORDER_IDS.slice(0, 4));
    const zero = await list({ perPage: 0 });
    expect(zero.data?.contents).toHaveLength(4);
  });

  test('negative paging, perPage above the maximum and pages beyond 32 bits are 400 problems', async () => {
    for (const body of [{ page: -1 }, { perPage: -5 }, { perPage: 1001 }, { page: 2 ** 31, perPage: 3 }]) {
      const { error, response } = await list(body);
      expect(response.status).toBe(400);
      expect(error?.status).toBe(400);
      expect(error?.errors?.[0]?.path).toMatch(/^\/body\/(page|perPage)$/);
    }
  });

  test('a page far beyond the end is empty and still counts every match', async () => {
    const { data, response } = await list({ page: 2 ** 31 - 1, perPage: 1000 });
    expect(response.status).toBe(200);
    expect(data).toEqual({ totalCount: 7, contents: [] });
  });
});

describe('POST /api/v1/contents: request checks and credentials', () => {
  test('a missing siteId or an unknown field is a 400 problem', async () => {
    // Bodies the contract's types forbid, sent as they are.
    const missing = await app.request.post('/api/v1/contents').set('X-SS-API-KEY', key).send({});
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual([expect.objectContaining({ path: '/body/siteId' })]);
    const unknown = await app.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({ siteId: 1, channelID: 2 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('channelID');
  });

  test('no key is 401, a key without the Contents scope is 403', async () => {
    const anonymous = await send({ siteId: 1 }, typed.clientAs({}));
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.error?.type).toBe('https://cms.example/problems/unauthorized');
    const channelsOnly = typed.clientAs({ apiKey: await app.createApiKey(['Channels']) });
    const forbidden = await send({ siteId: 1 }, channelsOnly);
    expect(forbidden.response.status).toBe(403);
    expect(forbidden.error?.type).toBe('https://cms.example/problems/forbidden');
    // The apiKey query parameter is a security scheme, not a parameter the client's types list.
    const byQuery = await app.request
      .post(`/api/v1/contents?apiKey=${encodeURIComponent(key)}`)
      .send({ siteId: 1 });
    expect(byQuery.status).toBe(200);
  });
});
