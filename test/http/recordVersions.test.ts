import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { type SecondApp, startSecondApp, type TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * Strong ETags and If-Match on users, administrators, API keys and webhook subscriptions
 * (docs/api/conditional-writes.md), as contents and channels have them: a get answers the record's
 * ETag and 304 for If-None-Match, updates answer the new one, a stale If-Match is a 412 naming the
 * current one, and two editors holding the same validator race through two nodes with database
 * clients of their own: exactly one wins.
 */

let app: TestApp;
let key: string;
let otherNode: SecondApp;
let secondHandle: DbHandle;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp('all'));
  secondHandle = await createDb(app.config.databaseUrl);
  otherNode = await startSecondApp(app, { db: secondHandle });
}, 60_000);
afterAll(async () => {
  await otherNode.close();
  await secondHandle.db.$disconnect();
  await app.close();
});

type Node = Pick<TestApp, 'request'>;

const get = (path: string, headers: Record<string, string> = {}, node: Node = app) =>
  node.request.get(path).set('X-SS-API-KEY', key).set(headers);
const post = (path: string, body?: object, headers: Record<string, string> = {}, node: Node = app) => {
  const request = node.request.post(path).set('X-SS-API-KEY', key).set(headers);
  return body === undefined ? request : request.send(body);
};

function expectStale(
  response: { status: number; headers: Record<string, string>; body: { type?: string } },
  current: string,
) {
  expect(response.status).toBe(412);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body.type).toBe('https://cms.example/problems/precondition-failed');
  expect(response.headers.etag).toBe(current);
}

interface Kind {
  name: string;
  /** Makes a record; answers its id and the path of its get (or undefined when it has none). */
  create(): Promise<number>;
  get?: (id: number) => string;
  update: (id: number) => string;
  updateBody: (n: number) => object;
  remove: (id: number) => string;
  /** The version as stored, to compare with what the answers say. */
  storedVersion(id: number): Promise<number | undefined>;
}

const kinds: Kind[] = [
  {
    name: 'user',
    async create() {
      const response = await post('/api/v1/users', {
        userName: `u${randomUUID().slice(0, 8)}`,
        password: 'Passw0rd1',
      });
      expect(response.status).toBe(200);
      return response.body.id as number;
    },
    get: (id) => `/api/v1/users/${id}`,
    update: (id) => `/api/v1/users/${id}/actions/update`,
    updateBody: (n) => ({ displayName: `Editor ${n}` }),
    remove: (id) => `/api/v1/users/${id}/actions/delete`,
    storedVersion: async (id) => (await app.db.user.findUnique({ where: { id } }))?.version,
  },
  {
    name: 'administrator',
    async create() {
      const response = await post('/api/v1/administrators', {
        userName: `a${randomUUID().slice(0, 8)}`,
        password: 'Passw0rd1',
      });
      expect(response.status).toBe(200);
      return response.body.value.id as number;
    },
    get: (id) => `/api/v1/administrators/${id}`,
    update: (id) => `/api/v1/administrators/${id}/actions/update`,
    updateBody: (n) => ({ displayName: `Editor ${n}` }),
    remove: (id) => `/api/v1/administrators/${id}/actions/delete`,
    storedVersion: async (id) => (await app.db.administrator.findUnique({ where: { id } }))?.version,
  },
  {
    name: 'API key',
    async create() {
      const response = await post('/api/v1/apiKeys', { title: `k${randomUUID()}`, scopes: ['Contents'] });
      expect(response.status).toBe(201);
      expect(response.headers.etag).toBe('"v1"');
      return response.body.apiKey.id as number;
    },
    update: (id) => `/api/v1/apiKeys/${id}/actions/update`,
    updateBody: (n) => ({ title: `Editor ${n}` }),
    remove: (id) => `/api/v1/apiKeys/${id}/actions/delete`,
    storedVersion: async (id) => (await app.db.apiKey.findUnique({ where: { id } }))?.version,
  },
  {
    name: 'webhook',
    async create() {
      const response = await post('/api/v1/webhooks', {
        url: 'https://hooks.example.com/cms',
        eventTypes: ['content.*'],
      });
      expect(response.status).toBe(201);
      return response.body.webhook.id as number;
    },
    get: (id) => `/api/v1/webhooks/${id}`,
    update: (id) => `/api/v1/webhooks/${id}/actions/update`,
    updateBody: (n) => ({ description: `Editor ${n}` }),
    remove: (id) => `/api/v1/webhooks/${id}/actions/delete`,
    storedVersion: async (id) => (await app.db.webhookSubscription.findUnique({ where: { id } }))?.version,
  },
];

describe.each(kinds.map((kind) => [kind.name, kind] as const))('%s', (_name, kind) => {
  if (kind.get !== undefined) {
    const read = kind.get;
    test('a get answers the strong ETag of its version; If-None-Match with it is a 304', async () => {
      const id = await kind.create();
      const response = await get(read(id));
      expect(response.status).toBe(200);
      expect(response.headers.etag).toBe(`"v${await kind.storedVersion(id)}"`);
      const fresh = await get(read(id), { 'If-None-Match': response.headers.etag as string });
      expect(fresh.status).toBe(304);
      expect(fresh.text).toBe('');
      expect((await post(kind.update(id), kind.updateBody(1))).status).toBe(200);
      const changed = await get(read(id), { 'If-None-Match': response.headers.etag as string });
      expect(changed.status).toBe(200);
      expect(changed.headers.etag).not.toBe(response.headers.etag);
    });
  }

  test('an update answers the new ETag; a stale If-Match is a 412 naming the current one', async () => {
    const id = await kind.create();
    const updated = await post(kind.update(id), kind.updateBody(1), { 'If-Match': '"v1"' });
    expect(updated.status).toBe(200);
    expect(updated.headers.etag).toBe('"v2"');
    expect(await kind.storedVersion(id)).toBe(2);
    const stale = await post(kind.update(id), kind.updateBody(2), { 'If-Match': '"v1"' });
    expectStale(stale, '"v2"');
    expect(await kind.storedVersion(id)).toBe(2);
    // `*`, a list naming the current one, and no If-Match at all write as before.
    expect((await post(kind.update(id), kind.updateBody(3), { 'If-Match': '"v1", "v2"' })).headers.etag).toBe(
      '"v3"',
    );
    expect((await post(kind.update(id), kind.updateBody(4), { 'If-Match': '*' })).headers.etag).toBe('"v4"');
    expect((await post(kind.update(id), kind.updateBody(5))).headers.etag).toBe('"v5"');
    // A weak tag never matches.
    expectStale(await post(kind.update(id), kind.updateBody(6), { 'If-Match': 'W/"v5"' }), '"v5"');
  });

  test('a delete with a stale If-Match is a 412 and deletes nothing; with the current one it deletes', async () => {
    const id = await kind.create();
    expect((await post(kind.update(id), kind.updateBody(1))).status).toBe(200);
    expectStale(await post(kind.remove(id), undefined, { 'If-Match': '"v1"' }), '"v2"');
    expect(await kind.storedVersion(id)).toBe(2);
    expect((await post(kind.remove(id), undefined, { 'If-Match': '"v2"' })).status).toBe(200);
    expect(await kind.storedVersion(id)).toBeUndefined();
    // Gone: 404, whatever If-Match says.
    expect((await post(kind.remove(id), undefined, { 'If-Match': '"v2"' })).status).toBe(404);
  });

  test('two editors on two nodes holding the same ETag: one wins, the other gets 412', async () => {
    const id = await kind.create();
    const [one, two] = await Promise.all([
      post(kind.update(id), kind.updateBody(1), { 'If-Match': '"v1"' }, app),
      post(kind.update(id), kind.updateBody(2), { 'If-Match': '"v1"' }, otherNode),
    ]);
    const statuses = [one.status, two.status].sort();
    expect(statuses).toEqual([200, 412]);
    const winner = one.status === 200 ? one : two;
    const loser = one.status === 200 ? two : one;
    expect(winner.headers.etag).toBe('"v2"');
    expect(loser.headers.etag).toBe('"v2"');
    expect(await kind.storedVersion(id)).toBe(2);
  });
});

test('an API key reset honours If-Match and answers the new ETag', async () => {
  const created = await post('/api/v1/apiKeys', { title: `reset ${randomUUID()}`, scopes: ['Contents'] });
  const id = created.body.apiKey.id as number;
  expectStale(await post(`/api/v1/apiKeys/${id}/actions/reset`, undefined, { 'If-Match': '"v9"' }), '"v1"');
  const reset = await post(`/api/v1/apiKeys/${id}/actions/reset`, undefined, { 'If-Match': '"v1"' });
  expect(reset.status).toBe(200);
  expect(reset.headers.etag).toBe('"v2"');
  expect(reset.body.key).not.toBe(created.body.key);
});

test("a user's login changes what get user answers, so it advances the ETag", async () => {
  const userName = `login${randomUUID().slice(0, 8)}`;
  const created = await post('/api/v1/users', { userName, password: 'Passw0rd1' });
  const id = created.body.id as number;
  const before = await get(`/api/v1/users/${id}`);
  // Logins send the MD5 of the password, as the original system's clients do.
  const login = await app.request
    .post('/api/v1/users/actions/login')
    .send({ account: userName, password: createHash('md5').update('Passw0rd1').digest('hex') });
  expect(login.status).toBe(200);
  const after = await get(`/api/v1/users/${id}`, { 'If-None-Match': before.headers.etag as string });
  expect(after.status).toBe(200);
  expect(after.headers.etag).not.toBe(before.headers.etag);
});
