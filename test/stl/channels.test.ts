import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { operations } from '../../client/src/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { loadStlFixture } from './fixture.ts';

/*
 * stl/channels over HTTP, on the database the run selects, with the catalogue of test/stl/fixture.ts:
 *
 *   1 (root, taxis 0) ─┬─ 11 News (taxis 1, groups top,nav) ── 12 Tech ── 13 Deep
 *                      ├─ 14 Products (taxis 2)
 *                      └─ 15 News (taxis 3)
 *
 * Hits of the approved contents outside the recycle bin, by channel: 14: 50, 11: 40 (101, 102,
 * 110; not 103 pending nor 107 recycled), 12: 20, 13: 5, 1: 1, 15: 0.
 */

let app: TestApp;
let key: string;
let typed: TypedClient;

beforeAll(async () => {
  app = await startTestApp();
  await loadStlFixture(app, new Date());
  // Known add dates for the AddDate orders (children of the root: 11 oldest, 14 newest).
  const dates: [number, string][] = [
    [11, '2024-01-15T10:00:00Z'],
    [15, '2024-02-01T10:00:00Z'],
    [14, '2024-03-01T10:00:00Z'],
  ];
  for (const [id, date] of dates)
    await app.db.channel.update({ where: { id }, data: { addDate: new Date(date) } });
  key = await app.createApiKey(['STL']);
  typed = await startClient(app, key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

type Query = NonNullable<operations['stlListChannels']['parameters']['query']>;

async function channels(query: Query = {}) {
  const { data, response } = await typed.client.GET('/api/v1/stl/channels', { params: { query } });
  return {
    status: response.status,
    value: data?.value,
    ids: (data?.value ?? []).map((channel) => channel.id),
  };
}

describe('scope', () => {
  test('Children by default, of the root channel by default', async () => {
    expect((await channels()).ids).toEqual([11, 14, 15]);
    expect((await channels({ siteId: 1, scope: 'Children' })).ids).toEqual([11, 14, 15]);
  });

  test('Self, SelfAndChildren, Descendant, All (the channel and all its descendants)', async () => {
    expect((await channels({ channelIndex: 'news', scope: 'Self' })).ids).toEqual([11]);
    expect((await channels({ channelIndex: 'news', scope: 'SelfAndChildren' })).ids).toEqual([11, 12]);
    expect((await channels({ channelIndex: 'news', scope: 'Descendant' })).ids).toEqual([12, 13]);
    expect((await channels({ channelIndex: 'news', scope: 'All' })).ids).toEqual([11, 12, 13]);
    expect((await channels({ scope: 'All' })).ids).toEqual([1, 11, 12, 13, 14, 15]);
    expect((await channels({ channelId: 13, scope: 'Children' })).ids).toEqual([]);
  });

  test('another site: its own channels only', async () => {
    expect((await channels({ siteDir: 'en/news', scope: 'All' })).ids).toEqual([2, 21]);
  });
});

describe('order and window', () => {
  test('Default taxis ascending, Back descending', async () => {
    expect((await channels({ order: 'Default' })).ids).toEqual([11, 14, 15]);
    expect((await channels({ order: 'Back' })).ids).toEqual([15, 14, 11]);
  });

  test('AddDate newest first, AddDateBack oldest first', async () => {
    expect((await channels({ order: 'AddDate' })).ids).toEqual([14, 15, 11]);
    expect((await channels({ order: 'AddDateBack' })).ids).toEqual([11, 15, 14]);
  });

  test("Hits: by the sum of the hits of each channel's approved contents outside the recycle bin", async () => {
    expect((await channels({ scope: 'Descendant', order: 'Hits' })).ids).toEqual([14, 11, 12, 13, 15]);
  });

  test('Random: the same channels, each once', async () => {
    expect((await channels({ scope: 'All', order: 'Random' })).ids.sort((a, b) => a - b)).toEqual([
      1, 11, 12, 13, 14, 15,
    ]);
  });

  test('startNum and totalNum pick a window of the ordered list', async () => {
    expect((await channels({ scope: 'All', startNum: 2, totalNum: 3 })).ids).toEqual([11, 12, 13]);
    expect((await channels({ scope: 'All', totalNum: 1 })).ids).toEqual([1]);
    expect((await channels({ scope: 'All', startNum: 7 })).ids).toEqual([]);
  });
});

describe('groups', () => {
  test('group: in any of them, without regard to case; groupNot: in none', async () => {
    expect((await channels({ scope: 'All', group: 'NAV,other' })).ids).toEqual([11]);
    expect((await channels({ groupNot: 'top' })).ids).toEqual([14, 15]);
    expect((await channels({ group: 'top', groupNot: 'nav' })).ids).toEqual([]);
  });
});

test('form B: tree fields, the last sibling, the approved contents', async () => {
  const { value } = await channels();
  expect(value?.[0]).toMatchObject({
    id: 11,
    channelName: 'News',
    parentsPath: '1',
    childrenCount: 1,
    isLastNode: false,
    groupNameCollection: 'top,nav',
    contentNum: 3,
  });
  expect(value?.[2]).toMatchObject({ id: 15, isLastNode: true, contentNum: 0 });
  // The same record as stl/channel answers.
  const one = await typed.client.GET('/api/v1/stl/channel', { params: { query: { channelId: 14 } } });
  expect(value?.[1]).toEqual(one.data?.value);
});

describe('errors', () => {
  test('400: totalNum over the list maximum, an unknown parameter, an unknown scope', async () => {
    const over = await app.request
      .get('/api/v1/stl/channels')
      .query({ totalNum: app.config.maxPerPage + 1 })
      .set('X-SS-API-KEY', key);
    expect(over.status).toBe(400);
    expect(JSON.stringify(over.body)).toContain('totalNum');
    const unknown = await app.request
      .get('/api/v1/stl/channels')
      .query({ where: 'id=1' })
      .set('X-SS-API-KEY', key);
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain('where');
    const scope = await app.request
      .get('/api/v1/stl/channels')
      .query({ scope: 'Everything' })
      .set('X-SS-API-KEY', key);
    expect(scope.status).toBe(400);
  });

  test('404: an unknown site or channel', async () => {
    expect((await channels({ siteId: 9 })).status).toBe(404);
    expect((await channels({ channelIndex: 'nope' })).status).toBe(404);
    expect((await channels({ siteId: 2, channelId: 11 })).status).toBe(404);
  });

  test('401 without credentials, 403 with a key without the STL scope', async () => {
    expect((await app.request.get('/api/v1/stl/channels')).status).toBe(401);
    const other = await app.createApiKey(['Contents', 'Channels']);
    expect((await app.request.get('/api/v1/stl/channels').set('X-SS-API-KEY', other)).status).toBe(403);
  });
});
