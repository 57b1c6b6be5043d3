import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * Bad input never gets a 500: hundreds of requests to the content and channel operations, built from
 * a fixed seed out of awkward values (wildcards, quotes, huge numbers, impossible dates, NUL bytes,
 * unknown columns and operators, ids that do not exist or do not belong together). Each must be
 * answered with a 2xx or a 4xx.
 */

let app: TestApp;
let key: string;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp('all', { config: { rateLimitPerMinute: 0 } }));
});
afterAll(() => app.close());

let seed = 42;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const AWKWARD: readonly unknown[] = [
  '',
  ' ',
  '0',
  '-1',
  '1.5',
  '99999999999999999999',
  'true',
  'x',
  "'",
  '"',
  '%',
  '_',
  '\\',
  '%\\',
  ',',
  ',,',
  '1,2,',
  '2024-13-01',
  '2024-02-29 10:00:00',
  '9999-12-31 23:59:59',
  'é',
  '\u0000',
  'a'.repeat(5000),
  "x' OR '1'='1",
  5,
  -3,
  1.5,
  2 ** 31,
  2 ** 60,
  true,
  false,
  null,
  [],
  {},
];
const COLUMNS = [
  'id',
  'title',
  'hits',
  'addDate',
  'top',
  'groupNames',
  'tagNames',
  'linkUrl',
  'lastHitsDate',
  'checked',
  'content',
  'nope',
  '',
  'x"y',
];
const OPERATORS = [
  '=',
  '!=',
  '>',
  '>=',
  '<',
  '<=',
  'In',
  'NotIn',
  'Like',
  'NotLike',
  'in',
  'LIKE',
  'between',
  undefined,
];
const CONTENT_FIELDS = [
  'title',
  'hits',
  'addDate',
  'isChecked',
  'checkedLevel',
  'groupNames',
  'linkUrl',
  'taxis',
  'top',
  'lastHitsDate',
  'content',
  'checked',
  'sourceId',
];
const CHANNEL_FIELDS = [
  'channelName',
  'indexName',
  'channelIndex',
  'filePath',
  'groupNames',
  'keywords',
  'channelTemplateId',
  'linkUrl',
];
const IDS = [1, 2, 3, 4, 7, 11, 999, 0, -1, 2 ** 31, 'x'];

function someOf(fields: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter(() => random() < 0.3).map((field) => [field, pick(AWKWARD)]));
}

function listBody(): Record<string, unknown> {
  const body: Record<string, unknown> = {
    siteId: pick([1, 10, 999, 0]),
    perPage: pick([0, 1, 5, 1000]),
    page: pick([0, 1, 3, 2 ** 30]),
  };
  if (random() < 0.7) {
    body.wheres = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
      const operator = pick(OPERATORS);
      return { column: pick(COLUMNS), value: pick(AWKWARD), ...(operator && { operator }) };
    });
  }
  if (random() < 0.4) body.orders = [{ column: pick(COLUMNS), desc: random() < 0.5 }];
  if (random() < 0.3) body.groupNames = [String(pick(AWKWARD))];
  if (random() < 0.3) body.channelId = pick([1, 2, 3, 11, 999]);
  if (random() < 0.2) body.index = String(pick(AWKWARD));
  return body;
}

test('no request built from awkward values gets a 5xx', async () => {
  const failures: string[] = [];
  const check = (what: string, status: number, sent: unknown) => {
    if (status >= 500) failures.push(`${what} → ${status}: ${JSON.stringify(sent).slice(0, 200)}`);
  };
  for (let round = 0; round < 300; round++) {
    const body = listBody();
    check(
      'list',
      (await app.request.post('/api/v1/contents').set('X-SS-API-KEY', key).send(body)).status,
      body,
    );

    const contentPath = `/api/v1/contents/${pick(IDS)}/${pick(IDS)}/${pick(IDS)}`;
    const update = someOf(CONTENT_FIELDS);
    const updated = await app.request
      .post(`${contentPath}/actions/update`)
      .set('X-SS-API-KEY', key)
      .send(update);
    check(`update ${contentPath}`, updated.status, update);
    check(`get ${contentPath}`, (await app.request.get(contentPath).set('X-SS-API-KEY', key)).status, null);

    const channelPath = `/api/v1/channels/${pick(IDS)}/${pick(IDS)}`;
    const change = someOf(CHANNEL_FIELDS);
    const changed = await app.request
      .post(`${channelPath}/actions/update`)
      .set('X-SS-API-KEY', key)
      .send(change);
    check(`update ${channelPath}`, changed.status, change);
  }
  expect(failures).toEqual([]);
});
