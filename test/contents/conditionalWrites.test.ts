import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { type SecondApp, startSecondApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * Conditional requests on single records (docs/api/conditional-writes.md): strong ETags on the
 * reads of one content or channel, 304 for If-None-Match, 412 for a stale If-Match, and two
 * editors holding the same validator racing through two nodes with database clients of their own.
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
  // Another node: its own connection to the same database, its own listening server.
  secondHandle = await createDb(app.config.databaseUrl);
  otherNode = await startSecondApp(app, { db: secondHandle });
  second = await startClient(otherNode, key);
}, 60_000);
afterAll(async () => {
  await second.close();
  await otherNode.close();
  await secondHandle.db.$disconnect();
  await first.close();
  await app.close();
});

const CONTENT = '/api/v1/contents/1/3/3';
const CHANNEL = '/api/v1/channels/1/4';

function call(
  base: TypedClient,
  path: string,
  options: { post?: object; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${base.baseUrl}${path}`, {
    method: options.post === undefined ? 'GET' : 'POST',
    headers: {
      'X-SS-API-KEY': key,
      ...(options.post === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...options.headers,
    },
    ...(options.post === undefined ? {} : { body: JSON.stringify(options.post) }),
  });
}

async function etagOf(path: string): Promise<string> {
  const response = await call(first, path);
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  const etag = response.headers.get('etag');
  expect(etag).toMatch(/^"v\d+"$/);
  return etag as string;
}

async function expectStale(response: Response, current: string): Promise<void> {
  expect(response.status).toBe(412);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.headers.get('etag')).toBe(current);
  const problem = (await response.json()) as { type: string; detail: string };
  expect(problem.type).toBe('https://cms.example/problems/precondition-failed');
  expect(problem.detail).toContain(`its current ETag is ${current}`);
}

describe('reads of one record', () => {
  test.each([CONTENT, CHANNEL])('%s: a strong ETag; If-None-Match with it answers 304', async (path) => {
    const etag = await etagOf(path);
    expect(await etagOf(path)).toBe(etag);
    const fresh = await call(first, path, { headers: { 'If-None-Match': etag } });
    expect(fresh.status).toBe(304);
    expect(await fresh.text()).toBe('');
    expect(fresh.headers.get('etag')).toBe(etag);
    // Compared weakly, as RFC 9110 asks for If-None-Match; fetch's own no-cache changes nothing.
    const weak = await call(first, path, { headers: { 'If-None-Match': `"v999", W/${etag}` } });
    expect(weak.status).toBe(304);
    await weak.arrayBuffer();
    const other = await call(first, path, { headers: { 'If-None-Match': '"v999"' } });
    expect(other.status).toBe(200);
    expect(((await other.json()) as { id: number }).id).toBe(Number(path.split('/').at(-1)));
  });

  test("a list keeps express's weak ETag: it is not one record's", async () => {
    const response = await call(first, '/api/v1/channels/1');
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(response.headers.get('etag')).toMatch(/^W\//);
  });
});

describe('updates and deletes with If-Match', () => {
  test('content: a stale or weak validator writes nothing (412); the current one or * writes', async () => {
    const before = await etagOf(CONTENT);
    const updated = await call(first, `${CONTENT}/actions/update`, {
      post: { title: 'First edit' },
      headers: { 'If-Match': before },
    });
    expect(updated.status).toBe(200);
    const after = updated.headers.get('etag') as string;
    expect(after).not.toBe(before);
    expect(after).toBe(await etagOf(CONTENT));
    expect(((await updated.json()) as { title: string }).title).toBe('First edit');

    await expectStale(
      await call(first, `${CONTENT}/actions/update`, {
        post: { title: 'Lost' },
        headers: { 'If-Match': before },
      }),
      after,
    );
    await expectStale(
      await call(first, `${CONTENT}/actions/update`, {
        post: { title: 'Lost' },
        headers: { 'If-Match': `W/${after}` },
      }),
      after,
    );
    await expectStale(
      await call(first, `${CONTENT}/actions/delete`, { post: {}, headers: { 'If-Match': before } }),
      after,
    );
    const row = await app.db.content.findUniqueOrThrow({ where: { id: 3 } });
    expect([row.title, row.recycled]).toEqual(['First edit', false]);

    // Any of a list matches; * matches whatever version exists; no header writes as before.
    const listed = await call(first, `${CONTENT}/actions/update`, {
      post: { title: 'Second edit' },
      headers: { 'If-Match': `"v999", ${after}` },
    });
    expect(listed.status).toBe(200);
    await listed.arrayBuffer();
    const star = await call(first, `${CONTENT}/actions/update`, {
      post: { summary: 'starred' },
      headers: { 'If-Match': '*' },
    });
    expect(star.status).toBe(200);
    await star.arrayBuffer();
    const plain = await call(first, `${CONTENT}/actions/update`, { post: { summary: 'plain' } });
    expect(plain.status).toBe(200);
    await plain.arrayBuffer();
    expect(plain.headers.get('etag')).toBe(await etagOf(CONTENT));
  });

  test('a missing record is 404 whatever If-Match says', async () => {
    for (const path of ['/api/v1/contents/1/3/99/actions/update', '/api/v1/channels/1/99/actions/update']) {
      const response = await call(first, path, { post: {}, headers: { 'If-Match': '"v1"' } });
      expect(response.status).toBe(404);
      await response.arrayBuffer();
    }
  });

  test('channel: update and delete refuse a stale validator; a child created changes the parent', async () => {
    const before = await etagOf(CHANNEL);
    const created = await call(first, '/api/v1/channels/1', { post: { parentId: 4, channelName: 'Child' } });
    expect(created.status).toBe(200);
    await created.arrayBuffer();
    const after = await etagOf(CHANNEL);
    expect(after).not.toBe(before);
    await expectStale(
      await call(first, `${CHANNEL}/actions/update`, {
        post: { channelName: 'Lost' },
        headers: { 'If-Match': before },
      }),
      after,
    );
    await expectStale(
      await call(first, `${CHANNEL}/actions/delete`, { post: {}, headers: { 'If-Match': before } }),
      after,
    );
    expect(await app.db.channel.count({ where: { id: 4 } })).toBe(1);
    const renamed = await call(first, `${CHANNEL}/actions/update`, {
      post: { channelName: 'Renamed' },
      headers: { 'If-Match': after },
    });
    expect(renamed.status).toBe(200);
    await renamed.arrayBuffer();
    const current = renamed.headers.get('etag') as string;
    expect(current).toBe(await etagOf(CHANNEL));
    const deleted = await call(first, `${CHANNEL}/actions/delete`, {
      post: {},
      headers: { 'If-Match': current },
    });
    expect(deleted.status).toBe(200);
    expect(((await deleted.json()) as { channelName: string }).channelName).toBe('Renamed');
    expect(await app.db.channel.count({ where: { id: 4 } })).toBe(0);
  });
});

describe('two editors racing with the same validator, through two nodes', () => {
  test('of each pair exactly one update wins; the other gets 412 and overwrites nothing', async () => {
    for (let round = 0; round < 8; round += 1) {
      const etag = await etagOf(CONTENT);
      const [a, b] = await Promise.all([
        call(first, `${CONTENT}/actions/update`, {
          post: { title: `A${round}` },
          headers: { 'If-Match': etag },
        }),
        call(second, `${CONTENT}/actions/update`, {
          post: { title: `B${round}` },
          headers: { 'If-Match': etag },
        }),
      ]);
      const statuses = [a.status, b.status].sort();
      expect(statuses).toEqual([200, 412]);
      const winner = a.status === 200 ? `A${round}` : `B${round}`;
      await Promise.all([a.arrayBuffer(), b.arrayBuffer()]);
      const row = await app.db.content.findUniqueOrThrow({ where: { id: 3 } });
      expect(row.title).toBe(winner);
      expect(`"v${row.version}"`).not.toBe(etag);
    }
  }, 120_000);

  test('an update racing a delete: one of them, never both', async () => {
    const etag = await etagOf(CONTENT);
    const [update, remove] = await Promise.all([
      call(first, `${CONTENT}/actions/update`, { post: { title: 'Racer' }, headers: { 'If-Match': etag } }),
      call(second, `${CONTENT}/actions/delete`, { post: {}, headers: { 'If-Match': etag } }),
    ]);
    // The update first: the delete's validator is stale (412). The delete first: the content is in
    // the recycle bin, so the update finds none (404: without If-Match it would be 404 too, and
    // RFC 9110 §13.2.1 then has the precondition ignored).
    const outcome = [update.status, remove.status];
    expect([
      [200, 412],
      [404, 200],
    ]).toContainEqual(outcome);
    await Promise.all([update.arrayBuffer(), remove.arrayBuffer()]);
    const row = await app.db.content.findUniqueOrThrow({ where: { id: 3 } });
    expect(row.recycled).toBe(remove.status === 200);
    expect(row.title === 'Racer').toBe(update.status === 200);
  }, 60_000);
});
