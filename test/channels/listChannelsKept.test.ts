import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { listChannelsText } from '../../src/domain/channels/list.ts';
import { type SecondApp, startSecondApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * The channel list's ETag and the list each node keeps (src/domain/channels/list.ts): If-None-Match
 * answers 304 while the list is unchanged, and a node that keeps a list shows at once what another
 * node, with a database client of its own, wrote. The other node runs in production mode, where
 * the kept text is sent as it is (the first, in test mode, parses and checks it first), so every
 * comparison between them also compares the two ways of sending it.
 */

let app: TestApp;
let key: string;
let first: TypedClient;
let otherNode: SecondApp;
let second: TypedClient;
let secondHandle: DbHandle;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Channels', 'Contents']));
  first = await startClient(app, key);
  secondHandle = await createDb(app.config.databaseUrl);
  otherNode = await startSecondApp(app, { db: secondHandle, config: { nodeEnv: 'production' } });
  second = await startClient(otherNode, key);
}, 60_000);
afterAll(async () => {
  await second.close();
  await otherNode.close();
  await secondHandle.db.$disconnect();
  await first.close();
  await app.close();
});

const LIST = '/api/v1/channels/1';

function call(
  node: TypedClient,
  path: string,
  options: { post?: object; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${node.baseUrl}${path}`, {
    method: options.post === undefined ? 'GET' : 'POST',
    headers: {
      'X-SS-API-KEY': key,
      ...(options.post === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...options.headers,
    },
    ...(options.post === undefined ? {} : { body: JSON.stringify(options.post) }),
  });
}

interface Listed {
  etag: string;
  channels: { id: number; channelName: string; childrenCount: number; contentNum: number }[];
}

async function listOf(node: TypedClient): Promise<Listed> {
  const response = await call(node, LIST);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const etag = response.headers.get('etag') as string;
  expect(etag).toMatch(/^W\/"[\w-]{27}"$/);
  const body = (await response.json()) as { value: Listed['channels'] };
  return { etag, channels: body.value };
}

/**
 * Both nodes' lists, which must be the same answer with the same ETag, and the same as the list
 * built from nothing kept (point reads that are a new key of the kept lists).
 */
async function bothLists(): Promise<Listed> {
  const [one, two] = [await listOf(first), await listOf(second)];
  expect(two).toEqual(one);
  const built = await listChannelsText(app.db, { ...app.services.reads }, 1);
  expect(built.etag).toBe(one.etag);
  expect(JSON.parse(built.text.bytes.toString('utf8'))).toEqual({ value: one.channels });
  return one;
}

async function write(node: TypedClient, path: string, post: object = {}): Promise<void> {
  const response = await call(node, path, { post });
  const text = await response.text();
  expect([200, 201]).toContain(response.status);
  expect(text.length).toBeGreaterThan(0);
}

const summary = (listed: Listed) =>
  listed.channels.map(({ id, channelName, childrenCount, contentNum }) => [
    id,
    channelName,
    childrenCount,
    contentNum,
  ]);

describe('GET /api/v1/channels/{siteId}: ETag and If-None-Match', () => {
  test('the same weak ETag on every node; 304 while it is current, 200 for another tag', async () => {
    const { etag, channels } = await bothLists();
    for (const node of [first, second]) {
      const fresh = await call(node, LIST, { headers: { 'If-None-Match': etag } });
      expect(fresh.status).toBe(304);
      expect(fresh.headers.get('etag')).toBe(etag);
      expect(await fresh.text()).toBe('');
      // Compared weakly, among others (RFC 9110 §13.1.2).
      const among = await call(node, LIST, { headers: { 'If-None-Match': `"v1", ${etag.slice(2)}` } });
      expect(among.status).toBe(304);
      await among.arrayBuffer();
      const other = await call(node, LIST, { headers: { 'If-None-Match': 'W/"another"' } });
      expect(other.status).toBe(200);
      expect(other.headers.get('etag')).toBe(etag);
      expect(((await other.json()) as { value: unknown }).value).toEqual(channels);
    }
  });

  test('compressed as the client asks, the same list in every coding', async () => {
    const { etag, channels } = await listOf(first);
    for (const node of [first, second]) {
      // Twice each: the production node compresses a kept text once per coding and keeps it.
      for (const coding of ['br', 'gzip', 'br', 'gzip', 'identity']) {
        const response = await call(node, LIST, { headers: { 'Accept-Encoding': coding } });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-encoding')).toBe(coding === 'identity' ? null : coding);
        expect(response.headers.get('etag')).toBe(etag);
        expect(((await response.json()) as { value: unknown }).value).toEqual(channels);
      }
    }
  });

  test('each site has its own ETag', async () => {
    const site10 = await call(first, '/api/v1/channels/10');
    expect(site10.status).toBe(200);
    const { value } = (await site10.json()) as { value: { id: number }[] };
    expect(value.map(({ id }) => id)).toEqual([10, 11]);
    expect(site10.headers.get('etag')).not.toBe((await listOf(first)).etag);
  });

  test('404 for an unknown site, whatever If-None-Match says; 400 for an overlong If-None-Match', async () => {
    for (const node of [first, second]) {
      const missing = await call(node, '/api/v1/channels/999', { headers: { 'If-None-Match': '*' } });
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { detail: string }).detail).toBe('Site 999 does not exist');
      const overlong = await call(node, LIST, { headers: { 'If-None-Match': `"${'x'.repeat(1100)}"` } });
      expect(overlong.status).toBe(400);
      expect(overlong.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      await overlong.arrayBuffer();
    }
  });
});

describe('a kept list follows writes made through another node', () => {
  test('create, update and delete of channels, and approved contents, change the list and its ETag', async () => {
    const start = await bothLists();
    expect(summary(start)).toEqual([
      [1, 'Main site', 2, 0],
      [4, 'Products', 0, 1],
      [2, 'News', 1, 2],
      [3, 'Tech', 0, 0],
    ]);
    const etags = new Set([start.etag]);
    // Each write goes through one node; the other, which keeps the list, must show it at once.
    const steps: { node: TypedClient; path: string; post?: object; expected: unknown[] }[] = [
      {
        node: second,
        path: '/api/v1/channels/1',
        post: { parentId: 2, channelName: 'Added' },
        expected: [
          [1, 'Main site', 2, 0],
          [4, 'Products', 0, 1],
          [2, 'News', 2, 2],
          [3, 'Tech', 0, 0],
          [expect.any(Number), 'Added', 0, 0],
        ],
      },
      {
        node: first,
        path: '/api/v1/channels/1/4/actions/update',
        post: { channelName: 'Products renamed' },
        expected: [
          [1, 'Main site', 2, 0],
          [4, 'Products renamed', 0, 1],
          [2, 'News', 2, 2],
          [3, 'Tech', 0, 0],
          [expect.any(Number), 'Added', 0, 0],
        ],
      },
      {
        // An approved content of News to the recycle bin: News's approved contents go down.
        node: second,
        path: '/api/v1/contents/1/2/1/actions/delete',
        expected: [
          [1, 'Main site', 2, 0],
          [4, 'Products renamed', 0, 1],
          [2, 'News', 2, 1],
          [3, 'Tech', 0, 0],
          [expect.any(Number), 'Added', 0, 0],
        ],
      },
    ];
    for (const { node, path, post, expected } of steps) {
      await write(node, path, post);
      const listed = await bothLists();
      expect(summary(listed)).toEqual(expected);
      expect(etags.has(listed.etag)).toBe(false);
      etags.add(listed.etag);
    }
    const added = (await listOf(first)).channels.find(({ channelName }) => channelName === 'Added');
    const before = await listOf(first);
    await write(first, `/api/v1/channels/1/${added?.id}/actions/delete`);
    const after = await bothLists();
    expect(summary(after)).toEqual([
      [1, 'Main site', 2, 0],
      [4, 'Products renamed', 0, 1],
      [2, 'News', 1, 1],
      [3, 'Tech', 0, 0],
    ]);
    // The ETag a client held before the delete no longer answers 304, on either node.
    for (const node of [first, second]) {
      const stale = await call(node, LIST, { headers: { 'If-None-Match': before.etag } });
      expect(stale.status).toBe(200);
      expect(stale.headers.get('etag')).toBe(after.etag);
      await stale.arrayBuffer();
    }
  });

  test("a write through the other node's own database client shows too", async () => {
    const before = await bothLists();
    await secondHandle.db.channel.update({
      where: { id: 3 },
      data: { channelName: 'Tech (direct)', version: { increment: 1 } },
    });
    const after = await bothLists();
    expect(after.channels.find(({ id }) => id === 3)?.channelName).toBe('Tech (direct)');
    expect(after.etag).not.toBe(before.etag);
  });

  test('a write the list does not show (a content title) keeps the list and its ETag', async () => {
    const before = await bothLists();
    await write(second, '/api/v1/contents/1/2/2/actions/update', { title: 'Beta program, retitled' });
    const after = await bothLists();
    expect(after).toEqual(before);
    const fresh = await call(first, LIST, { headers: { 'If-None-Match': before.etag } });
    expect(fresh.status).toBe(304);
    await fresh.arrayBuffer();
  });
});
