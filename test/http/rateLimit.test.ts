import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import type { Redis } from 'ioredis';
import { createRedis } from '../../src/db/redis.ts';
import { digestApiKey } from '../../src/domain/crypto/apiKeys.ts';
import { signAccessToken } from '../../src/domain/crypto/tokens.ts';
import { KnownCredentials } from '../../src/http/auth.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { testRedisKeyPrefix } from '../support/run.ts';

/*
 * Rate limits, counted in the shared state: the test database here, Redis in the multi-node case
 * that TEST_REDIS_URL (set by CI) adds, where two apps that share one Redis share each counter.
 * Keys and tokens known to be good are unlimited unless the key has a limit of its own; anything
 * else is limited per address (LIMIT here).
 */

const LIMIT = 3;
const contents = (app: TestApp, key?: string) => {
  const call = app.request.post('/api/v1/contents').send({ siteId: 1 });
  return key === undefined ? call : call.set('X-SS-API-KEY', key);
};
const statusesOf = async (count: number, call: () => PromiseLike<{ status: number }>) => {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await call()).status);
  return statuses;
};
const repeat = (count: number, status: number) => Array.from({ length: count }, () => status);
const idOf = async (app: TestApp, key: string) =>
  (await app.db.apiKey.findUniqueOrThrow({ where: { digest: digestApiKey(key) } })).id;
const limitKey = async (app: TestApp, key: string, rateLimitPerMinute: number | null) =>
  app.db.apiKey.update({ where: { id: await idOf(app, key) }, data: { rateLimitPerMinute } });

describe('one node', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp({ config: { rateLimitPerMinute: LIMIT } });
  });
  afterEach(() => app.close());

  test('a known key without a limit of its own is unlimited', async () => {
    const key = await app.createApiKey(['Contents']);
    // Its first request, before the worker knows the key is good, is charged to no budget.
    const first = await contents(app, key);
    expect(first.status).toBe(404);
    expect(first.headers.ratelimit).toBeUndefined();
    const later = await contents(app, key);
    expect(later.status).toBe(404);
    expect(later.headers.ratelimit).toBeUndefined();
    expect(await statusesOf(LIMIT * 3, () => contents(app, key))).toEqual(repeat(LIMIT * 3, 404));
  });

  test('a key with a limit of its own is counted by key; past it, a 429 problem with Retry-After', async () => {
    const key = await app.createApiKey(['Contents']);
    await limitKey(app, key, 2);
    expect((await contents(app, key)).status).toBe(404); // learnt, charged to no budget
    for (let remaining = 1; remaining >= 0; remaining--) {
      const response = await contents(app, key);
      expect(response.status).toBe(404);
      expect(response.headers.ratelimit).toMatch(new RegExp(`r=${remaining}\\b`));
    }
    const refused = await contents(app, key);
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({
      type: 'https://cms.example/problems/rate-limited',
      status: 429,
      title: 'Too Many Requests',
    });
    expect(refused.body.detail).toMatch(
      /^Too many requests: at most 2 a minute for this API key; retry in \d+ s$/,
    );
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The same key as a query parameter is the same budget; another key is not affected.
    expect((await app.request.post(`/api/v1/contents?apiKey=${key}`).send({ siteId: 1 })).status).toBe(429);
    const other = await app.createApiKey(['Contents']);
    expect((await contents(app, other)).status).toBe(404);
    // Counted under the key's id: two passed, two refused (the request that taught it was not).
    expect(
      await app.db.sharedCounter.findFirst({ where: { key: `rate:apiKey:${await idOf(app, key)}` } }),
    ).toMatchObject({ count: 4 });
  });

  test('a limit set through key management applies from the next request on', async () => {
    const manager = await app.createApiKey(['ApiKeys', 'Contents']);
    const key = await app.createApiKey(['Contents']);
    expect((await contents(app, manager)).status).toBe(404); // learnt
    expect((await contents(app, key)).status).toBe(404); // learnt
    const changed = await app.request
      .post(`/api/v1/apiKeys/${await idOf(app, key)}/actions/update`)
      .set('X-SS-API-KEY', manager)
      .send({ rateLimitPerMinute: 1 });
    expect(changed.status).toBe(200);
    expect(changed.body.rateLimitPerMinute).toBe(1);
    // The next request is let through as unlimited and teaches the node the new limit.
    expect(await statusesOf(3, () => contents(app, key))).toEqual([404, 404, 429]);
  });

  test('a token is unlimited', async () => {
    const administrator = await app.db.administrator.create({
      data: { userName: 'operator', passwordHash: 'x', passwordSalt: 'x' },
    });
    const token = signAccessToken(
      { id: administrator.id, kind: 'administrator', scopes: [], version: administrator.tokenVersion },
      app.config.cmsSecret,
      { expiresIn: 600 },
    ).token;
    const call = () =>
      app.request.post('/api/v1/contents').set('Authorization', `Bearer ${token}`).send({ siteId: 1 });
    expect(await statusesOf(LIMIT * 3, call)).toEqual(repeat(LIMIT * 3, 404));
  });

  test('refused keys count against the address that sends them: a new random key each time escapes nothing', async () => {
    const key = await app.createApiKey(['Contents']);
    expect((await contents(app, key)).status).toBe(404); // learnt: charged to no budget
    let i = 0;
    expect(await statusesOf(LIMIT + 1, () => contents(app, `cms_made-up-${i++}`))).toEqual([
      ...repeat(LIMIT, 401),
      429,
    ]);
    const refused = await contents(app, 'cms_made-up');
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.body.detail).toMatch(
      /^Too many requests: at most 3 a minute for this address; retry in \d+ s$/,
    );
    // The address is out of budget for refused credentials; the known key is not limited by it,
    // nor are requests without credentials (a budget of their own).
    expect((await contents(app, key)).status).toBe(404);
    expect((await contents(app)).status).toBe(401);
  });

  test('a valid key is never charged to the anonymous budget of its address, even on a worker that has not seen it yet', async () => {
    // Anonymous traffic from the same address (a proxy's, say) uses the whole budget.
    expect(await statusesOf(LIMIT + 1, () => contents(app))).toEqual([...repeat(LIMIT, 401), 429]);
    // Keys this worker has never seen still get through, and stay unlimited.
    for (let i = 0; i < 3; i++) {
      const key = await app.createApiKey(['Contents']);
      expect(await statusesOf(LIMIT + 1, () => contents(app, key))).toEqual(repeat(LIMIT + 1, 404));
    }
    expect((await contents(app)).status).toBe(429);
  });

  test('a deleted or reset key loses its budget at the first request the node refuses', async () => {
    const key = await app.createApiKey(['Contents']);
    expect((await contents(app, key)).status).toBe(404); // learnt
    await app.db.apiKey.update({
      where: { id: await idOf(app, key) },
      data: { digest: digestApiKey('cms_new') },
    });
    // Refused by authentication while still known (not counted), then forgotten: each refusal
    // counts against the address.
    expect(await statusesOf(LIMIT + 2, () => contents(app, key))).toEqual([...repeat(LIMIT + 1, 401), 429]);
  });

  test('requests without credentials are counted by address', async () => {
    expect(await statusesOf(LIMIT + 1, () => contents(app))).toEqual([401, 401, 401, 429]);
  });

  test('without Redis the counters live in the database, where every node sharing it sees them', async () => {
    for (let i = 0; i < 2; i++) await contents(app);
    const counters = await app.db.sharedCounter.findMany();
    expect(counters).toHaveLength(1);
    expect(counters[0]?.key).toMatch(/^rate:address:/);
    expect(counters[0]?.count).toBe(2);
    expect(counters[0]?.resetAt.getTime()).toBeGreaterThan(Date.now());
  });

  test('ping and the health checks are never limited (x-rate-limited: false in the contract)', async () => {
    for (let i = 0; i < LIMIT * 3; i++) {
      expect((await app.request.get('/api/v1/ping')).status).toBe(200);
      expect((await app.request.get('/healthz')).status).toBe(200);
    }
  });

  test('a path no operation exempts is counted, outside /api/v1 too', async () => {
    expect(await statusesOf(LIMIT + 1, () => app.request.get('/nowhere'))).toEqual([
      ...repeat(LIMIT, 404),
      429,
    ]);
    expect((await app.request.post('/api/v1/ping')).status).toBe(429);
  });
});

test("a limit of 0 turns the address limit off, not a key's own", async () => {
  const app = await startTestApp({ config: { rateLimitPerMinute: 0 } });
  try {
    expect(await statusesOf(10, () => contents(app))).toEqual(repeat(10, 401));
    const key = await app.createApiKey(['Contents']);
    await limitKey(app, key, 2);
    expect(await statusesOf(4, () => contents(app, key))).toEqual([404, 404, 404, 429]);
  } finally {
    await app.close();
  }
});

test('when Redis cannot be reached, requests pass (the limiter fails open)', async () => {
  const unreachable = createRedis('redis://127.0.0.1:1');
  const app = await startTestApp({ config: { rateLimitPerMinute: 1 }, redis: unreachable });
  try {
    expect(await statusesOf(3, () => contents(app))).toEqual(repeat(3, 401));
    const key = await app.createApiKey(['Contents']);
    await limitKey(app, key, 1);
    expect(await statusesOf(3, () => contents(app, key))).toEqual(repeat(3, 404));
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
    const config = { rateLimitPerMinute: LIMIT, redisKeyPrefix: testRedisKeyPrefix() };
    first = await startTestApp({ config, redis: redisA });
    second = await startTestApp({ config, redis: redisB });
  });
  afterAll(async () => {
    await first.close();
    await second.close();
    await redisA.quit();
    await redisB.quit();
  });

  test("a key's requests count on every node", async () => {
    const key = await first.createApiKey(['Contents']);
    await limitKey(first, key, LIMIT);
    // Each test app has a database of its own: the second node gets the same key, with the same id.
    await second.db.apiKey.create({
      data: {
        id: await idOf(first, key),
        title: 'same key',
        digest: digestApiKey(key),
        scopes: 'Contents',
        rateLimitPerMinute: LIMIT,
      },
    });
    // Each node learns the key on its first request (charged to no budget), then counts it as the key.
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

describe('KnownCredentials', () => {
  const budget = (counter: string) => ({ counter, limitPerMinute: 5 });

  test('remembers a budget for its lifetime, refreshed by each add', () => {
    const known = new KnownCredentials(10, 1_000);
    known.add('a', budget('apiKey:1'), 0);
    expect(known.budgetOf('a', 999)).toEqual(budget('apiKey:1'));
    known.add('a', { counter: 'apiKey:1', limitPerMinute: null }, 500);
    expect(known.budgetOf('a', 1_499)).toEqual({ counter: 'apiKey:1', limitPerMinute: null });
    expect(known.budgetOf('a', 1_500)).toBeUndefined();
  });

  test('forgets on request, and the oldest beyond its capacity', () => {
    const known = new KnownCredentials(2, 1_000);
    known.add('a', budget('apiKey:1'), 0);
    known.add('b', budget('apiKey:2'), 0);
    known.add('c', budget('apiKey:3'), 0);
    expect(known.budgetOf('a', 1)).toBeUndefined();
    expect(known.budgetOf('b', 1)).toEqual(budget('apiKey:2'));
    known.forget('b');
    expect(known.budgetOf('b', 1)).toBeUndefined();
    expect(known.budgetOf('c', 1)).toEqual(budget('apiKey:3'));
  });
});

describe('TRUST_PROXY: the client address behind a proxy', () => {
  /** Larger than the logins of one test, so that the login limit is what answers 429 there. */
  const BUDGET = 20;
  const from = (app: TestApp, forwardedFor: string) =>
    app.request.post('/api/v1/contents').set('X-Forwarded-For', forwardedFor).send({ siteId: 1 });
  const login = (app: TestApp, forwardedFor: string, account: string) =>
    app.request
      .post('/api/v1/administrators/actions/login')
      .set('X-Forwarded-For', forwardedFor)
      .send({ account, password: '5f4dcc3b5aa765d61d8327deb882cf99' });

  test('off (the default): X-Forwarded-For is ignored, a spoofed one escapes nothing', async () => {
    const app = await startTestApp({ config: { rateLimitPerMinute: BUDGET } });
    try {
      // Login limits per address: the peer's address, whatever the header says.
      const logins: number[] = [];
      for (let n = 0; n < 11; n++) logins.push((await login(app, `198.51.100.${n}`, `nobody-${n}`)).status);
      expect(logins).toEqual([...repeat(10, 401), 429]);
      // The anonymous budget likewise: the 11 logins used 11 of it.
      let i = 0;
      expect(await statusesOf(BUDGET - 11 + 1, () => from(app, `203.0.113.${i++}`))).toEqual([
        ...repeat(BUDGET - 11, 401),
        429,
      ]);
      const counters = await app.db.sharedCounter.findMany({ where: { key: { startsWith: 'rate:' } } });
      expect(counters.map((counter) => counter.key)).toEqual(['rate:address:127.0.0.1']);
    } finally {
      await app.close();
    }
  });

  test.each([
    ['a hop count', 1],
    ['a list naming the proxy', ['10.0.0.0/8', 'loopback']],
  ] as const)(
    'set to %s: each client behind the proxy has its own budget and login limit, and the logs name it',
    async (_name, trustProxy) => {
      const lines: string[] = [];
      const { default: pino } = await import('pino');
      const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
      const app = await startTestApp({
        config: {
          rateLimitPerMinute: BUDGET,
          trustProxy: typeof trustProxy === 'number' ? trustProxy : [...trustProxy],
        },
        logger,
      });
      try {
        expect(await statusesOf(BUDGET + 1, () => from(app, '203.0.113.7'))).toEqual([
          ...repeat(BUDGET, 401),
          429,
        ]);
        // Another client behind the same proxy is not affected.
        expect((await from(app, '203.0.113.8')).status).toBe(401);
        // The nearest hop counts: addresses a client put in front of the proxy's are ignored.
        expect((await from(app, '192.0.2.1, 203.0.113.7')).status).toBe(429);
        const logins: number[] = [];
        for (let n = 0; n < 11; n++) logins.push((await login(app, '198.51.100.1', `nobody-${n}`)).status);
        expect(logins).toEqual([...repeat(10, 401), 429]);
        expect((await login(app, '198.51.100.2', 'nobody-0')).status).toBe(401);
        const logged = lines
          .map((line) => JSON.parse(line) as { req?: { remoteAddress?: string } })
          .map((line) => line.req?.remoteAddress)
          .filter((address) => address !== undefined);
        expect(logged).toContain('203.0.113.8');
        expect(logged).not.toContain('127.0.0.1');
      } finally {
        await app.close();
      }
    },
  );
});
