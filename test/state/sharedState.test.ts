import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import type { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { createRedis } from '../../src/db/redis.ts';
import { handlers } from '../../src/operations/registry.ts';
import { createSharedState, type SharedState, SharedStateUnavailable } from '../../src/state/index.ts';
import { startTestApp } from '../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testRedisKeyPrefix } from '../support/run.ts';

/*
 * One behavioural suite for every store behind the shared-state port: the database (SQLite, or
 * PostgreSQL with TEST_DATABASE_URL) and Redis (with TEST_REDIS_URL; each run uses a key prefix of
 * its own, since runs share one Redis). Each store is used by two instances, as two nodes would.
 */

const silent = pino({ level: 'silent' });
const WINDOW_MS = 60_000;

interface Nodes {
  a: SharedState;
  b: SharedState;
  close(): Promise<void>;
}

async function databaseNodes(): Promise<Nodes> {
  const database = await createTestDatabase();
  // The second node has a connection of its own to the same database.
  const second = await createDb(database.url);
  const options = { redisKeyPrefix: 'unused:', logger: silent, signalPollIntervalMs: 50 };
  const a = createSharedState({ db: database.handle.db, ...options });
  const b = createSharedState({ db: second.db, ...options });
  return {
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      await second.db.$disconnect();
      await database.drop();
    },
  };
}

async function redisNodes(url: string): Promise<Nodes> {
  const database = await createTestDatabase();
  const clients = [createRedis(url), createRedis(url)] as const;
  const redisKeyPrefix = testRedisKeyPrefix();
  const [a, b] = clients.map((redis) =>
    createSharedState({ db: database.handle.db, redis, redisKeyPrefix, logger: silent }),
  ) as [SharedState, SharedState];
  return {
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      for (const client of clients) await client.quit();
      await database.drop();
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Collects what a channel delivers; `next()` resolves with the messages once there are `count`. */
function collector() {
  const messages: string[] = [];
  let waiting: { count: number; resolve: () => void } | undefined;
  return {
    messages,
    listener(message: string) {
      messages.push(message);
      if (waiting !== undefined && messages.length >= waiting.count) waiting.resolve();
    },
    async received(count: number): Promise<string[]> {
      if (messages.length < count) await new Promise<void>((resolve) => (waiting = { count, resolve }));
      return messages;
    },
  };
}

const redisUrl = process.env.TEST_REDIS_URL;
const stores: [string, () => Promise<Nodes>][] = [['database', databaseNodes]];
if (redisUrl) stores.push(['redis', () => redisNodes(redisUrl)]);

describe.each(stores)('the %s store', (kind, makeNodes) => {
  let nodes: Nodes;
  let a: SharedState;
  let b: SharedState;
  beforeAll(async () => {
    nodes = await makeNodes();
    ({ a, b } = nodes);
  });
  afterAll(() => nodes.close());

  const key = (name: string) => `${name}:${randomUUID()}`;

  test('is the configured kind', () => {
    expect(a.kind).toBe(kind);
  });

  describe('counters', () => {
    test('the first increment starts the window; later ones count within it', async () => {
      const counter = key('count');
      const before = Date.now();
      const first = await a.increment(counter, WINDOW_MS);
      const after = Date.now();
      expect(first.count).toBe(1);
      expect(first.resetAt.getTime()).toBeGreaterThanOrEqual(before + WINDOW_MS - 1000);
      expect(first.resetAt.getTime()).toBeLessThanOrEqual(after + WINDOW_MS + 1000);
      const second = await b.increment(counter, WINDOW_MS);
      expect(second.count).toBe(2);
      expect(Math.abs(second.resetAt.getTime() - first.resetAt.getTime())).toBeLessThan(1000);
      expect(await a.get(counter)).toEqual({ count: 2, resetAt: expect.any(Date) });
      expect((await a.increment(key('count'), WINDOW_MS)).count).toBe(1);
    });

    test('every read of a window answers the same end, however late its reply is handled', async () => {
      const counter = key('end');
      const first = await a.increment(counter, WINDOW_MS);
      // The reply waits while this node is busy (the command is already on its way): a window end
      // taken from this node's clock at the reply would move by the wait.
      const pending = [b.get(counter), a.increment(counter, WINDOW_MS)] as const;
      const busyUntil = Date.now() + 60;
      while (Date.now() < busyUntil);
      const [read, second] = await Promise.all(pending);
      expect(read?.count).toBeGreaterThanOrEqual(1);
      expect(second.count).toBe(2);
      for (const state of [read, second, await b.get(counter)]) {
        expect(Math.abs((state?.resetAt.getTime() ?? 0) - first.resetAt.getTime())).toBeLessThanOrEqual(2);
      }
    });

    test('once the window has ended, the counter starts again at 1', async () => {
      const counter = key('expiry');
      expect((await a.increment(counter, 200)).count).toBe(1);
      expect((await b.increment(counter, 200)).count).toBe(2);
      await sleep(300);
      expect(await a.get(counter)).toBeUndefined();
      expect((await b.increment(counter, 200)).count).toBe(1);
    });

    test('50 concurrent increments on two nodes answer exactly 1..50', async () => {
      const counter = key('concurrent');
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).increment(counter, WINDOW_MS)),
      );
      const counts = results.map((result) => result.count).sort((x, y) => x - y);
      expect(counts).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect((await a.get(counter))?.count).toBe(50);
    });

    test('decrement takes one back, never below 0, and never creates a counter', async () => {
      const counter = key('decrement');
      for (let i = 0; i < 3; i++) await a.increment(counter, WINDOW_MS);
      await b.decrement(counter);
      expect((await a.get(counter))?.count).toBe(2);
      await b.decrement(counter);
      await b.decrement(counter);
      await b.decrement(counter);
      expect((await a.get(counter))?.count ?? 0).toBe(0);
      expect((await a.increment(counter, WINDOW_MS)).count).toBe(1);

      const absent = key('decrement-absent');
      await a.decrement(absent);
      expect(await a.get(absent)).toBeUndefined();
      expect((await a.increment(absent, WINDOW_MS)).count).toBe(1);
    });

    test('reset forgets the counter on every node', async () => {
      const counter = key('reset');
      await a.increment(counter, WINDOW_MS);
      await a.increment(counter, WINDOW_MS);
      await b.reset(counter);
      expect(await a.get(counter)).toBeUndefined();
      expect((await a.increment(counter, WINDOW_MS)).count).toBe(1);
    });
  });

  describe('marks', () => {
    test('a mark is set once: true the first time, false afterwards on any node', async () => {
      const mark = key('mark');
      expect(await a.mark(mark, WINDOW_MS)).toBe(true);
      expect(await a.mark(mark, WINDOW_MS)).toBe(false);
      expect(await b.mark(mark, WINDOW_MS)).toBe(false);
      expect(await b.mark(key('mark'), WINDOW_MS)).toBe(true);
    });

    test('after its time to live the mark is gone and may be set again', async () => {
      const mark = key('mark-expiry');
      expect(await a.mark(mark, 200)).toBe(true);
      await sleep(300);
      expect(await b.mark(mark, WINDOW_MS)).toBe(true);
      expect(await a.mark(mark, WINDOW_MS)).toBe(false);
    });

    test('of 20 concurrent attempts on two nodes exactly one sets the mark', async () => {
      const mark = key('mark-race');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).mark(mark, WINDOW_MS)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('stored values', () => {
    test('put is set-if-absent: the first value stays, on every node, and is read back as stored', async () => {
      const name = key('value');
      expect(await a.getValue(name)).toBeUndefined();
      expect(await a.putValue(name, '{"state":"pending","n":1}', WINDOW_MS)).toBe(true);
      expect(await b.putValue(name, 'other', WINDOW_MS)).toBe(false);
      expect(await a.putValue(name, 'other', WINDOW_MS)).toBe(false);
      expect(await b.getValue(name)).toBe('{"state":"pending","n":1}');
    });

    test('after its time to live the value is gone and the key may be put again', async () => {
      const name = key('value-expiry');
      expect(await a.putValue(name, 'first', 200)).toBe(true);
      await sleep(300);
      expect(await b.getValue(name)).toBeUndefined();
      expect(await b.replaceValue(name, 'first', 'late', WINDOW_MS)).toBe(false);
      expect(await b.putValue(name, 'second', WINDOW_MS)).toBe(true);
      expect(await a.getValue(name)).toBe('second');
    });

    test('replace and delete act only while the value is still the expected one', async () => {
      const name = key('value-swap');
      await a.putValue(name, 'pending:1', WINDOW_MS);
      expect(await b.replaceValue(name, 'pending:2', 'done:2', WINDOW_MS)).toBe(false);
      expect(await a.getValue(name)).toBe('pending:1');
      expect(await b.replaceValue(name, 'pending:1', 'done:1', WINDOW_MS)).toBe(true);
      expect(await a.getValue(name)).toBe('done:1');
      expect(await a.deleteValue(name, 'pending:1')).toBe(false);
      expect(await a.getValue(name)).toBe('done:1');
      expect(await b.deleteValue(name, 'done:1')).toBe(true);
      expect(await a.getValue(name)).toBeUndefined();
      expect(await a.putValue(name, 'again', WINDOW_MS)).toBe(true);
    });

    test('replace starts a new time to live', async () => {
      const name = key('value-ttl');
      await a.putValue(name, 'short', 300);
      expect(await b.replaceValue(name, 'short', 'long', WINDOW_MS)).toBe(true);
      await sleep(400);
      expect(await a.getValue(name)).toBe('long');
    });

    test('of 20 concurrent puts on two nodes exactly one stores its value', async () => {
      const name = key('value-race');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).putValue(name, `v${i}`, WINDOW_MS)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await a.getValue(name)).toBe(`v${results.indexOf(true)}`);
    });
  });

  describe('signals', () => {
    test('a broadcast reaches the subscribers of its channel on other nodes, and only those', async () => {
      const channel = key('restart');
      const other = key('other');
      const onB = collector();
      const onOther = collector();
      const unsubscribe = [
        await b.subscribe(channel, onB.listener),
        await b.subscribe(other, onOther.listener),
      ];
      await a.broadcast(channel, 'now');
      await a.broadcast(other, 'x');
      expect(await onB.received(1)).toEqual(['now']);
      // Had the first message leaked to the other channel, it would have arrived before 'x'.
      expect(await onOther.received(1)).toEqual(['x']);
      for (const stop of unsubscribe) await stop();
    });

    test('the sending node hears its own broadcast; history before subscribing is not replayed', async () => {
      const channel = key('invalidate');
      await a.broadcast(channel, 'old');
      const onA = collector();
      const onB = collector();
      const stopA = await a.subscribe(channel, onA.listener);
      const stopB = await b.subscribe(channel, onB.listener);
      await a.broadcast(channel, 'new');
      expect(await onA.received(1)).toEqual(['new']);
      expect(await onB.received(1)).toEqual(['new']);
      await stopA();
      await stopB();
    });

    test('an unsubscribed listener hears nothing more; the others still do', async () => {
      const channel = key('unsubscribe');
      const gone = collector();
      const staying = collector();
      const stopGone = await b.subscribe(channel, gone.listener);
      const stopStaying = await b.subscribe(channel, staying.listener);
      await a.broadcast(channel, 'one');
      expect(await gone.received(1)).toEqual(['one']);
      await stopGone();
      await a.broadcast(channel, 'two');
      expect(await staying.received(2)).toEqual(['one', 'two']);
      expect(gone.messages).toEqual(['one']);
      await stopStaying();
    });

    test('a listener that throws does not stop delivery to the others', async () => {
      const channel = key('throwing');
      const stopThrowing = await b.subscribe(channel, () => {
        throw new Error('listener bug');
      });
      const fine = collector();
      const stopFine = await b.subscribe(channel, fine.listener);
      await a.broadcast(channel, 'first');
      await a.broadcast(channel, 'second');
      expect(await fine.received(2)).toEqual(['first', 'second']);
      await stopThrowing();
      await stopFine();
    });
  });

  test('ping answers', async () => {
    await expect(a.ping()).resolves.toBeUndefined();
  });
});

(redisUrl ? describe : describe.skip)("the Redis store's scripts", () => {
  test('go by their SHA-1 (EVALSHA); a Redis that forgot them (SCRIPT FLUSH) is sent them whole again', async () => {
    const url = redisUrl as string;
    const database = await createTestDatabase();
    const redis = createRedis(url);
    const watcher = createRedis(url);
    const state = createSharedState({
      db: database.handle.db,
      redis,
      redisKeyPrefix: testRedisKeyPrefix(),
      logger: silent,
    });
    const counter = `scripts:${randomUUID()}`;
    // What Redis is sent for this counter's key (MONITOR sees every connection's commands).
    const sent: string[] = [];
    const monitor = await watcher.monitor();
    monitor.on('monitor', (_time: string, args: string[]) => {
      const command = String(args[0]).toLowerCase();
      if (command.startsWith('eval') && args.some((arg) => arg.endsWith(counter))) sent.push(command);
    });
    try {
      // Each script's first call on a connection sends it whole (EVAL), which loads it.
      expect((await state.increment(counter, WINDOW_MS)).count).toBe(1);
      expect((await state.get(counter))?.count).toBe(1);
      await waitUntil(() => sent.length >= 2);
      expect(sent).toEqual(['eval', 'eval']);
      sent.length = 0;
      expect((await state.increment(counter, WINDOW_MS)).count).toBe(2);
      expect((await state.increment(counter, WINDOW_MS)).count).toBe(3);
      expect((await state.get(counter))?.count).toBe(3);
      await waitUntil(() => sent.length >= 3);
      expect(sent).toEqual(['evalsha', 'evalsha', 'evalsha']);

      await redis.script('FLUSH');
      sent.length = 0;
      expect((await state.increment(counter, WINDOW_MS)).count).toBe(4);
      await waitUntil(() => sent.length >= 2);
      expect(sent).toEqual(['evalsha', 'eval']);
    } finally {
      monitor.disconnect();
      await watcher.quit();
      await state.close();
      await redis.quit();
      await database.drop();
    }
  });
});

/** Resolves once `done()` holds (MONITOR's lines arrive on their own connection, a moment later). */
async function waitUntil(done: () => boolean): Promise<void> {
  for (let tries = 0; !done() && tries < 200; tries++) await sleep(10);
}

/** A logger whose lines the test can read. */
function capturingLogger(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  return {
    logger: pino({ level: 'info' }, stream),
    lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('the fail policy, when the store does not answer', () => {
  // Nothing listens on port 1: connections are refused at once.
  let database: TestDatabase;
  let deadRedis: Redis;
  let deadDatabase: DbHandle;
  beforeAll(async () => {
    database = await createTestDatabase();
    deadRedis = createRedis('redis://:hunter2@127.0.0.1:1');
    deadDatabase = await createDb('postgresql://cms:hunter2@127.0.0.1:1/cms');
  });
  afterAll(async () => {
    deadRedis.disconnect();
    await deadDatabase.db.$disconnect();
    await database.drop();
  });

  const cases: [string, () => { redis?: Redis; db: DbHandle['db'] }][] = [
    ['Redis', () => ({ redis: deadRedis, db: database.handle.db })],
    ['the database', () => ({ db: deadDatabase.db })],
  ];

  describe.each(cases)('%s', (_name, store) => {
    let state: SharedState;
    let log: ReturnType<typeof capturingLogger>;
    beforeAll(() => {
      log = capturingLogger();
      state = createSharedState({ ...store(), redisKeyPrefix: 'cms-test-dead:', logger: log.logger });
    });
    afterEach(() => {
      for (const line of log.lines()) expect(JSON.stringify(line)).not.toContain('hunter2');
    });
    afterAll(() => state.close());

    test('counters fail open: not counted, requests pass; one throttled warning without the key', async () => {
      const before = Date.now();
      const result = await state.increment('login:secret-account', WINDOW_MS);
      expect(result.count).toBe(0);
      expect(result.resetAt.getTime()).toBeGreaterThanOrEqual(before + WINDOW_MS);
      expect((await state.increment('login:secret-account', WINDOW_MS)).count).toBe(0);
      expect(await state.get('login:secret-account')).toBeUndefined();
      await expect(state.decrement('login:secret-account')).resolves.toBeUndefined();
      await expect(state.reset('login:secret-account')).resolves.toBeUndefined();
      const warnings = log.lines().filter((line) => String(line.msg).includes('counters are not counted'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.level).toBe(40);
      expect(JSON.stringify(log.lines())).not.toContain('secret-account');
    });

    test('marks fail closed: SharedStateUnavailable', async () => {
      await expect(state.mark('captcha:answer', WINDOW_MS)).rejects.toBeInstanceOf(SharedStateUnavailable);
      expect(log.lines().some((line) => String(line.msg).includes('single-use marks are refused'))).toBe(
        true,
      );
      expect(JSON.stringify(log.lines())).not.toContain('captcha:answer');
    });

    test('stored values fail closed: SharedStateUnavailable, without the key in the log', async () => {
      await expect(state.putValue('idempotency:secret-key', 'v', WINDOW_MS)).rejects.toBeInstanceOf(
        SharedStateUnavailable,
      );
      await expect(state.getValue('idempotency:secret-key')).rejects.toBeInstanceOf(SharedStateUnavailable);
      await expect(state.replaceValue('idempotency:secret-key', 'v', 'w', WINDOW_MS)).rejects.toBeInstanceOf(
        SharedStateUnavailable,
      );
      await expect(state.deleteValue('idempotency:secret-key', 'v')).rejects.toBeInstanceOf(
        SharedStateUnavailable,
      );
      expect(log.lines().some((line) => String(line.msg).includes('stored values'))).toBe(true);
      expect(JSON.stringify(log.lines())).not.toContain('secret-key');
    });

    test('signals are best effort: broadcast and subscribe do not throw', async () => {
      await expect(state.broadcast('restart', 'now')).resolves.toBeUndefined();
      const unsubscribe = await state.subscribe('restart', () => {});
      await expect(unsubscribe()).resolves.toBeUndefined();
    });

    test('ping rejects, for readiness', async () => {
      await expect(state.ping()).rejects.toBeDefined();
    });
  });

  test('over HTTP, a mark that cannot be checked is a 503 problem with Retry-After', async () => {
    const app = await startTestApp({
      redis: deadRedis,
      handlers: {
        ...handlers,
        // Any operation that needs a single-use mark; ping stands in for captcha checks.
        ping: async (_input, { state }) => {
          await state.mark('captcha:answer', WINDOW_MS);
          return 'pong';
        },
      },
    });
    try {
      const response = await app.request.get('/api/v1/ping');
      expect(response.status).toBe(503);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({
        type: 'https://cms.example/problems/service-unavailable',
        status: 503,
        detail: 'State shared between nodes is unavailable; retry later',
      });
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
      expect(response.text).not.toContain('captcha');
    } finally {
      await app.close();
    }
  });

  test('over HTTP, a create with an Idempotency-Key is a 503 (nothing created); without one it runs', async () => {
    const app = await startTestApp({ redis: deadRedis });
    try {
      const key = await app.createApiKey(['ApiKeys']);
      const send = (headers: Record<string, string>) =>
        app.request
          .post('/api/v1/apiKeys')
          .set({ 'X-SS-API-KEY': key, ...headers })
          .send({ title: 'during the outage', scopes: ['ApiKeys'] });
      const keyed = await send({ 'Idempotency-Key': 'outage-1' });
      expect(keyed.status).toBe(503);
      expect(keyed.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(Number(keyed.headers['retry-after'])).toBeGreaterThan(0);
      expect(await app.db.apiKey.count({ where: { title: 'during the outage' } })).toBe(0);
      expect((await send({})).status).toBe(201);
    } finally {
      await app.close();
    }
  });
});
