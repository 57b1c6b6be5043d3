import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Redis } from 'ioredis';
import { createRedis } from '../../src/db/redis.ts';
import { SCOPES } from '../../src/domain/principal.ts';
import { GENERATION_LEAP } from '../../src/domain/system/caches.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { type SecondApp, startSecondApp, startTestApp, type TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * clearCache over HTTP, on the test database (SQLite, or PostgreSQL with TEST_DATABASE_URL): it drops
 * the stored list totals (rebuilt by the next list, to the same numbers) and, with Redis, the
 * credentials every node caches; it is recorded; it needs the Others scope.
 */

const PATH = '/api/v1/actions/clearCache';

describe('POST /api/v1/actions/clearCache', () => {
  let app: TestApp;
  let contentsKey: string;

  beforeAll(async () => {
    ({ app, key: contentsKey } = await startFixtureApp(['Contents']));
  }, 60_000);
  afterAll(async () => {
    await app.close();
  });

  /** A title filter: a total ContentTally cannot sum, so the list stores it (ContentCount). */
  const list = () =>
    app.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', contentsKey)
      .send({ siteId: 1, wheres: [{ column: 'title', operator: 'Like', value: '%e%' }], perPage: 1 });

  test('drops the stored list totals, which the next list counts again to the same number', async () => {
    const first = await list();
    expect(first.status).toBe(200);
    const total: number = first.body.totalCount;
    expect(total).toBeGreaterThan(1);
    expect(await app.db.contentCount.count()).toBeGreaterThan(0);

    const generations = () =>
      app.db.contentGeneration.findMany({ orderBy: { siteId: 'asc' }, select: { generation: true } });
    const before = await generations();
    expect(before.length).toBeGreaterThan(0);
    const key = await app.createApiKey(['Others']);
    const cleared = await app.request.post(PATH).set('X-SS-API-KEY', key);
    expect(cleared.status).toBe(200);
    // Every site's generation advanced: every node's kept pages and channel lists are unusable.
    expect((await generations()).map(({ generation }) => generation)).toEqual(
      before.map(({ generation }) => generation + GENERATION_LEAP),
    );
    expect(cleared.headers['content-type']).toMatch(/^application\/json/);
    // Without Redis no node caches credentials: only what was there is named.
    expect(cleared.body).toEqual({ value: true, cleared: ['contentCounts', 'contentPages'] });
    expect(await app.db.contentCount.count()).toBe(0);

    const again = await list();
    expect(again.status).toBe(200);
    expect(again.body.totalCount).toBe(total);
    expect(await app.db.contentCount.count()).toBeGreaterThan(0);
  });

  test('is recorded as a system.cacheCleared event naming its caller', async () => {
    const key = await app.createApiKey(['Others']);
    const keyRow = await app.db.apiKey.findFirst({ orderBy: { id: 'desc' }, select: { id: true } });
    await list();
    const before = await app.db.event.count();
    expect((await app.request.post(PATH).set('X-SS-API-KEY', key)).status).toBe(200);
    expect(await app.db.event.count()).toBe(before + 1);
    const event = await app.db.event.findFirst({ orderBy: { id: 'desc' } });
    expect(event).toMatchObject({
      type: 'system.cacheCleared',
      resourceType: 'system',
      actorType: 'apiKey',
      actorId: keyRow?.id,
    });
    expect(JSON.parse(event?.payload ?? '{}')).toEqual({
      cleared: 'contentCounts,contentPages',
      contentCounts: 1,
    });
  });

  test('without credentials: 401, and nothing is dropped', async () => {
    await list();
    const stored = await app.db.contentCount.count();
    const response = await app.request.post(PATH);
    expect(response.status).toBe(401);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({ type: `${PROBLEM_TYPE_BASE}unauthorized`, status: 401 });
    expect(await app.db.contentCount.count()).toBe(stored);
  });

  test('a key with every scope but Others: 403 naming the scope, and nothing is dropped', async () => {
    await list();
    const stored = await app.db.contentCount.count();
    const key = await app.createApiKey(SCOPES.filter((scope) => scope !== 'Others'));
    const response = await app.request.post(PATH).set('X-SS-API-KEY', key);
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}forbidden`,
      detail: "The credentials do not carry the 'Others' scope this operation needs",
    });
    expect(stored).toBeGreaterThan(0);
    expect(await app.db.contentCount.count()).toBe(stored);
  });
});

const redisUrl = process.env.TEST_REDIS_URL;

(redisUrl ? describe : describe.skip)('two nodes sharing the database and Redis', () => {
  let first: TestApp;
  let second: SecondApp;
  let redisA: Redis;
  let redisB: Redis;

  beforeAll(async () => {
    redisA = createRedis(redisUrl as string);
    redisB = createRedis(redisUrl as string);
    first = await startTestApp({ redis: redisA, config: { credentialCacheSeconds: 60 } });
    second = await startSecondApp(first, { redis: redisB });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await redisA?.quit();
    await redisB?.quit();
  });

  test("clearing on one node drops the other node's cached credentials", async () => {
    const operator = await first.createApiKey(['Others']);
    const key = await first.createApiKey(['Users'], { title: 'cached on the second node' });
    const users = () => second.request.get('/api/v1/users').set('X-SS-API-KEY', key);
    expect((await users()).status).toBe(200);
    // Removed behind the service: no node is told, so the second node, which cached it, lets it in.
    await first.db.apiKey.deleteMany({ where: { title: 'cached on the second node' } });
    expect((await users()).status).toBe(200);

    const cleared = await first.request.post(PATH).set('X-SS-API-KEY', operator);
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual({ value: true, cleared: ['credentials', 'contentCounts', 'contentPages'] });
    const refused = await users();
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('The API key is not valid');
  });
});
