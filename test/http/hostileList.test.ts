import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * Content lists at the edge of the contract's limits (bench/HOSTILE.md measures their cost on
 * 100,000 contents): the largest allowed are answered — never a 500 from a limit of the driver
 * (SQLite takes 32,766 bound values per statement) — and one step beyond is a 400 naming the field.
 */

let app: TestApp;
let key: string;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents']));
});
afterAll(() => app.close());

const list = (body: object) =>
  app.request
    .post('/api/v1/contents')
    .set('X-SS-API-KEY', key)
    .send({ siteId: 1, ...body });
const items = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, n) => `${prefix}${n}`).join(',');
const names = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, n) => `${prefix}${n}`.padEnd(255, 'x'));

describe('the largest lists the contract allows are answered', () => {
  test('20 wheres of In with 1,000 items each (20,000 bound values), 100 groups and 100 tags', async () => {
    // Every rule lists 999 titles that do not exist and one that does: rules are ANDed.
    const wheres = Array.from({ length: 20 }, () => ({
      column: 'title',
      operator: 'In',
      value: `${items('t', 999)},Beta program`,
    }));
    const response = await list({
      wheres,
      groupNames: [...names('g', 99), 'home'],
      tagNames: [...names('t', 99), 'beta'],
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ totalCount: 1, contents: [{ id: 2, title: 'Beta program' }] });
  });

  test('20 wheres of NotIn with 1,000 ids each', async () => {
    const response = await list({
      wheres: Array.from({ length: 20 }, (_, n) => ({
        column: 'id',
        operator: 'NotIn',
        value: items(`${n + 1}`, 1000),
      })),
      perPage: 100,
    });
    expect(response.status).toBe(200);
    // Items "10", "100", … and "20", "200", … are excluded; ids 1…7 of site 1 are not in any list.
    expect(response.body.contents.map((content: { id: number }) => content.id).sort()).toEqual([
      1, 2, 3, 4, 5, 6, 7,
    ]);
  });
});

test.each([
  ['groupNames', 'In', 'home', [2, 5]],
  ['tagNames', 'NotIn', 'beta', [1, 3, 4, 5, 6, 7]],
])('%s %s with 1,000 names is answered', async (column, operator, known, expected) => {
  // 999 names no content has, and one that contents 2 and 5 (group home) or 2 (tag beta) have.
  const response = await list({
    wheres: [{ column, operator, value: `${items('n', 999)},${known}` }],
    perPage: 100,
  });
  expect(response.status).toBe(200);
  expect(response.body.contents.map((content: { id: number }) => content.id).sort()).toEqual(expected);
});

describe('one step beyond is a 400 that names the field', () => {
  test.each([
    [
      '21 wheres',
      { wheres: Array.from({ length: 21 }, () => ({ column: 'id', operator: '>', value: '0' })) },
      '/body/wheres',
    ],
    ['101 group names', { groupNames: names('g', 101) }, '/body/groupNames'],
    ['101 tag names', { tagNames: names('t', 101) }, '/body/tagNames'],
    [
      '1,001 names in a groupNames rule',
      { wheres: [{ column: 'groupNames', operator: 'In', value: items('n', 1001) }] },
      '/body/wheres/0',
    ],
    [
      '1,001 names in a tagNames rule',
      { wheres: [{ column: 'tagNames', operator: 'NotIn', value: items('n', 1001) }] },
      '/body/wheres/0',
    ],
  ])('%s', async (_name, body, path) => {
    const response = await list(body);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.errors).toEqual([expect.objectContaining({ path })]);
  });
});
