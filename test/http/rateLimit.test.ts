import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import type { Redis } from 'ioredis';
import { createRedis } from '../../src/db/redis.ts';
import { digestApiKey } from '../../src/domain/crypto/apiKeys.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/*
 * Rate limits per client, counted in the shared state: the test database here, Redis in the
 * multi-node case that TEST_REDIS_URL (set by CI) adds, where two apps that share one Redis share
 * each client's counter.
 */

const LIMIT = 3;
const contents = (app: TestApp, key?: string) => {
  const call = app.request.post('/api/v1/contents').send({ siteId: 1 });
  return key === undefined ? call : call.set('X-SS-API-KEY', key);
};

describe('one node', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp({ config: { rateLimitPerMinute: LIMIT } });
  });
  afterEach(() => app.close());

  test('a known key gets a budget of its own; past it, a 429 problem with Retry-After', async () => {
    const key = await app.createApiKey(['Contents']);
    // Its first request is counted against the address: until then the key is not known to be good.
    expect((await contents(app, key)).status).toBe(404);
    for (let i = 0; i < LIMIT; i++) {
      const response = await contents(app, key);
      expect(response.status).toBe(404);
      expect(response.headers.ratelimit).toMatch(new RegExp(`r=${LIMIT - i - 1}\\b`));
    }
    const refused = await contents(app, key);
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({
      type: 'https://cms.example/problems/rate-limited',
      status: 429,
      title: 'Too Many Requests',
    });
    expect(refused.body.detail).toContain(`at most ${LIMIT} a minute per client`);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    const other = await app.createApiKey(['Contents']);
    expect((await contents(app, other)).status).toBe(404);
    expect((await app.request.post(`/api/v1/contents?apiKey=${key}`).send({ siteId: 1 })).status).toBe(429);
  });

  test('unknown keys count against the address that sends them: a new random key each time escapes nothing', async () => {
    const key = await app.createApiKey(['Contents']);
    expect((await contents(app, key)).status).toBe(404); // learnt: one request of the address's budget
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await contents(app, `cms_made-up-${i}`)).status);
    expect(statuses).toEqual([401, 401, 429]);
    // The address is out of budget; the known key keeps its own.
    expect((await contents(app, key)).status).toBe(404);
  });

  test('requests without credentials are counted by address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++) statuses.push((await contents(app)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  test('without Redis the counters live in the database, where every node sharing it sees them', async () => {
    for (let i = 0; i < 2; i++) await contents(app);
    const counters = await app.db.sharedCounter.findMany();
    expect(counters).toHaveLength(1);
    expect(counters[0]?.key).toMatch(/^rate:address:/);
    expect(counters[0]?.count).toBe(2);
    expect(counters[0]?.resetAt.getTime()).toBeGreaterThan(Date.now());
  });

  test('ping and the health checks are never limited', async () => {
    for (let i = 0; i < LIMIT * 3; i++) {
      expect((await app.request.get('/api/v1/ping')).status).toBe(200);
      expect((await app.request.get('/healthz')).status).toBe(200);
    }
  });
});

test('a limit of 0 turns limiting off', async () => {
  const app = await startTestApp({ config: { rateLimitPerMinute: 0 } });
  try {
    const key = await app.createApiKey(['Contents']);
    for (let i = 0; i < 10; i++) expect((await contents(app, key)).status).toBe(404);
  } finally {
    await app.close();
  }
});

test('when Redis cannot be reached, requests pass (the limiter fails open)', async () => {
  const unreachable = createRedis('redis://127.0.0.1:1');
  const app = await startTestApp({ config: { rateLimitPerMinute: 1 }, redis: unreachable });
  try {
    const key = await app.createApiKey(['Contents']);
    for (let i = 0; i < 3; i++) expect((await contents(app, key)).status).toBe(404);
  } finally {
    await app.close();
    unreachable.disconnect();
  }
});

const redisUrl = process.env.TEST_REDIS_URL;

(redisUrl ? describe : describe.skip)('several nodes sharing Redis', () => {
  let first: TestApp;
  let second: TestApp;
  let redisA: Redis;
  let redisB: Redis;
  beforeAll(async () => {
    redisA = createRedis(redisUrl as string);
    redisB = createRedis(redisUrl as string);
    // One deployment: the same key prefix on both nodes, new for each run.
    const config = { rateLimitPerMinute: LIMIT, redisKeyPrefix: `cms-test-${randomUUID()}:` };
    first = await startTestApp({ config, redis: redisA });
    second = await startTestApp({ config, redis: redisB });
  });
  afterAll(async () => {
    await first.close();
    await second.close();
    await redisA.quit();
    await redisB.quit();
  });

  test("a client's requests count on every node", async () => {
    const key = await first.createApiKey(['Contents']);
    // Each test app has a database of its own: the second node learns the same key.
    await second.db.apiKey.create({
      data: { title: 'same key', digest: digestApiKey(key), scopes: 'Contents' },
    });
    // Each node learns the key on its first request (counted by address), then counts it as the key.
    expect((await contents(first, key)).status).toBe(404);
    expect((await contents(second, key)).status).toBe(404);
    const statuses = [
      (await contents(first, key)).status,
      (await contents(second, key)).status,
      (await contents(first, key)).status,
      (await contents(second, key)).status,
    ];
    expect(statuses).toEqual([404, 404, 404, 429]);
  });
});
