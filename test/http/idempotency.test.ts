import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDb } from '../../src/db/client.ts';
import { createRedis } from '../../src/db/redis.ts';
import { handlers } from '../../src/operations/registry.ts';
import type { Handler } from '../../src/operations/types.ts';
import { startSecondApp, startTestApp, type TestApp } from '../support/app.ts';
import { loadFixture, startFixtureApp } from '../support/fixtures.ts';

/*
 * Idempotency-Key on the creates (src/http/idempotency.ts, docs/api/conditional-writes.md): a
 * retry answers the first result without creating again, on any node and after a restart; another
 * input is a 422, a retry while the first request runs a 409, and keys belong to their caller.
 */

const KEY_HEADER = 'Idempotency-Key';

let app: TestApp;
let key: string;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp('all'));
});
afterAll(() => app.close());

const channelBody = (indexName: string) => ({ parentId: 2, channelName: `Channel ${indexName}`, indexName });

function createChannel(
  target: Pick<TestApp, 'request'>,
  idempotencyKey: string | undefined,
  body: object,
  apiKey = key,
) {
  const request = target.request.post('/api/v1/channels/1').set('X-SS-API-KEY', apiKey);
  if (idempotencyKey !== undefined) request.set(KEY_HEADER, idempotencyKey);
  return request.send(body);
}

const channelsNamed = (indexName: string) => app.db.channel.count({ where: { indexName } });

describe('a retry with the same key and the same body', () => {
  test('answers the first result (status, body with its id, Location) without creating again', async () => {
    const idempotencyKey = randomUUID();
    const indexName = `idem-${randomUUID().slice(0, 8)}`;
    const first = await createChannel(app, idempotencyKey, channelBody(indexName));
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await createChannel(app, idempotencyKey, channelBody(indexName));
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers.location).toBe(`/api/v1/channels/1/${first.body.id}`);
    expect(await channelsNamed(indexName)).toBe(1);
  });

  test('the body is compared by its members, not their order', async () => {
    const idempotencyKey = randomUUID();
    const indexName = `order-${randomUUID().slice(0, 8)}`;
    const first = await createChannel(app, idempotencyKey, {
      parentId: 2,
      channelName: 'Ordered',
      indexName,
    });
    const again = await createChannel(app, idempotencyKey, {
      indexName,
      channelName: 'Ordered',
      parentId: 2,
    });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(await channelsNamed(indexName)).toBe(1);
  });

  test('without the header every request creates', async () => {
    const response = await createChannel(app, undefined, channelBody(`plain-${randomUUID().slice(0, 8)}`));
    expect(response.status).toBe(200);
    expect(response.headers['idempotent-replayed']).toBeUndefined();
  });

  test('a create content retried answers the same content, once in the channel', async () => {
    const idempotencyKey = randomUUID();
    const title = `Retried ${randomUUID()}`;
    const send = () =>
      app.request
        .post('/api/v1/contents/1/3')
        .set('X-SS-API-KEY', key)
        .set(KEY_HEADER, idempotencyKey)
        .send({ title, body: '<p>Once.</p>' });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(await app.db.content.count({ where: { title } })).toBe(1);
  });
});

describe('refusals', () => {
  test('the same key with another body is a 422 problem, and nothing is created', async () => {
    const idempotencyKey = randomUUID();
    const indexName = `first-${randomUUID().slice(0, 8)}`;
    expect((await createChannel(app, idempotencyKey, channelBody(indexName))).status).toBe(200);
    const other = `other-${randomUUID().slice(0, 8)}`;
    const response = await createChannel(app, idempotencyKey, channelBody(other));
    expect(response.status).toBe(422);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({
      type: 'https://cms.example/problems/idempotency-key-reused',
      status: 422,
    });
    expect(await channelsNamed(other)).toBe(0);
  });

  test('the same key on another create (another path) is a 422 too', async () => {
    const idempotencyKey = randomUUID();
    expect(
      (await createChannel(app, idempotencyKey, channelBody(`path-${randomUUID().slice(0, 8)}`))).status,
    ).toBe(200);
    const response = await app.request
      .post('/api/v1/webhooks/1/actions/test')
      .set('X-SS-API-KEY', key)
      .set(KEY_HEADER, idempotencyKey);
    expect(response.status).toBe(422);
  });

  test('a key that is not 1 to 255 printable ASCII characters is a 400', async () => {
    for (const bad of ['', 'with space', 'x'.repeat(256), 'é']) {
      const response = await createChannel(app, bad, channelBody(`bad-${randomUUID().slice(0, 8)}`));
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  test('after an error the key is free: only a success is kept', async () => {
    const idempotencyKey = randomUUID();
    // indexName 'news' is the fixture's: a clash (409) creates nothing.
    const clash = await createChannel(app, idempotencyKey, channelBody('news'));
    expect(clash.status).toBe(409);
    expect(clash.body.type).toBe('https://cms.example/problems/conflict');
    const fixed = `fixed-${randomUUID().slice(0, 8)}`;
    const retried = await createChannel(app, idempotencyKey, channelBody(fixed));
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await channelsNamed(fixed)).toBe(1);
  });

  test('two callers using the same key spelling each get their own record', async () => {
    const otherKey = await app.createApiKey(['Channels'], { title: 'another caller' });
    const idempotencyKey = randomUUID();
    const mine = await createChannel(app, idempotencyKey, channelBody(`mine-${randomUUID().slice(0, 8)}`));
    const sameBody = channelBody(`theirs-${randomUUID().slice(0, 8)}`);
    const theirs = await createChannel(app, idempotencyKey, sameBody, otherKey);
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.body.id);
    // The same body as another caller's is no replay of it either.
    const replayOfTheirs = await createChannel(app, idempotencyKey, sameBody);
    expect(replayOfTheirs.status).toBe(422);
  });
});

describe('a retry while the first request is still running', () => {
  let gated: TestApp;
  let gatedKey: string;
  let open: () => void = () => {};
  let entered: Promise<void> = Promise.resolve();
  beforeAll(async () => {
    const real = handlers.createChannel as Handler<'createChannel'>;
    gated = await startTestApp({
      handlers: {
        ...handlers,
        createChannel: async (input, context) => {
          await gate();
          return real(input, context);
        },
      },
    });
    await loadFixture(gated);
    gatedKey = await gated.createApiKey(['Channels']);
  });
  afterAll(() => gated.close());

  let gate: () => Promise<void> = async () => {};

  test('is a 409 problem; once the first has answered, the retry gets its result', async () => {
    let signalEntered: () => void = () => {};
    entered = new Promise<void>((resolve) => (signalEntered = resolve));
    const released = new Promise<void>((resolve) => (open = resolve));
    gate = async () => {
      signalEntered();
      await released;
    };
    const idempotencyKey = randomUUID();
    const body = channelBody(`gated-${randomUUID().slice(0, 8)}`);
    const first = createChannel(gated, idempotencyKey, body, gatedKey).then((response) => response);
    await entered;
    gate = async () => {};
    const during = await createChannel(gated, idempotencyKey, body, gatedKey);
    expect(during.status).toBe(409);
    expect(during.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(during.body.type).toBe('https://cms.example/problems/idempotency-key-in-flight');
    open();
    const answered = await first;
    expect(answered.status).toBe(200);
    const after = await createChannel(gated, idempotencyKey, body, gatedKey);
    expect(after.status).toBe(200);
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(after.body.id).toBe(answered.body.id);
    expect(await gated.db.channel.count({ where: { indexName: body.indexName } })).toBe(1);
  });
});

describe('results shown once are kept encrypted', () => {
  test('createApiKey retried answers the same key; the shared state holds neither it nor the body in clear', async () => {
    const idempotencyKey = randomUUID();
    const title = `retried key ${randomUUID()}`;
    const send = () =>
      app.request
        .post('/api/v1/apiKeys')
        .set('X-SS-API-KEY', key)
        .set(KEY_HEADER, idempotencyKey)
        .send({ title, scopes: ['Contents'] });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await app.db.apiKey.count({ where: { title } })).toBe(1);
    const stored = (await app.db.sharedValue.findMany()).map((row) => `${row.key} ${row.value}`).join('\n');
    expect(stored).not.toContain(first.body.key);
    expect(stored).not.toContain(title);
    expect(stored).not.toContain(idempotencyKey);
  });

  test('createWebhook retried answers the same secret, which the shared state does not hold in clear', async () => {
    const idempotencyKey = randomUUID();
    const send = () =>
      app.request
        .post('/api/v1/webhooks')
        .set('X-SS-API-KEY', key)
        .set(KEY_HEADER, idempotencyKey)
        .send({ url: 'https://hooks.example.com/cms', eventTypes: ['content.*'] });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(typeof first.body.secret).toBe('string');
    const stored = (await app.db.sharedValue.findMany()).map((row) => row.value).join('\n');
    expect(stored).not.toContain(first.body.secret);
  });
});

describe('keys are kept for IDEMPOTENCY_KEY_SECONDS', () => {
  /*
   * The stores' own expiry is tested in test/state/sharedState.test.ts; here, that the result is
   * kept for the configured time, and that once the store lets it go the key creates again. Time is
   * moved on in the store rather than waited for, which a loaded machine would make flaky.
   */
  test('the result is kept for the configured time; once expired, the same key creates again', async () => {
    const short = await startTestApp({ config: { idempotencyKeySeconds: 3600 } });
    try {
      await loadFixture(short);
      const shortKey = await short.createApiKey(['Channels']);
      const idempotencyKey = randomUUID();
      const before = Date.now();
      const first = await createChannel(short, idempotencyKey, channelBody('expiring-1'), shortKey);
      const after = Date.now();
      expect(first.status).toBe(200);
      const [row, ...others] = await short.db.sharedValue.findMany({
        where: { key: { startsWith: 'idempotency:' } },
      });
      expect(others).toEqual([]);
      expect(row?.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 3600_000);
      expect(row?.expiresAt.getTime()).toBeLessThanOrEqual(after + 3600_000);
      const kept = await createChannel(short, idempotencyKey, channelBody('expiring-1'), shortKey);
      expect(kept.headers['idempotent-replayed']).toBe('true');
      await short.db.sharedValue.updateMany({ data: { expiresAt: new Date(Date.now() - 1000) } });
      const later = await createChannel(short, idempotencyKey, channelBody('expiring-2'), shortKey);
      expect(later.status).toBe(200);
      expect(later.headers['idempotent-replayed']).toBeUndefined();
      expect(later.body.id).not.toBe(first.body.id);
    } finally {
      await short.close();
    }
  });
});

describe('every node sees the keys, and they survive a restart', () => {
  test('a retry sent to a second node sharing the state answers the first result', async () => {
    const second = await startSecondApp(app);
    try {
      const idempotencyKey = randomUUID();
      const body = channelBody(`node-${randomUUID().slice(0, 8)}`);
      const first = await createChannel(app, idempotencyKey, body);
      const again = await createChannel(second, idempotencyKey, body);
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.id).toBe(first.body.id);
      expect(await channelsNamed(body.indexName)).toBe(1);
    } finally {
      await second.close();
    }
  });

  test('a new process over the same database (its own database state) answers the first result', async () => {
    const idempotencyKey = randomUUID();
    const body = channelBody(`restart-${randomUUID().slice(0, 8)}`);
    const first = await createChannel(app, idempotencyKey, body);
    // What a restarted node has: a connection and a shared state of its own over the same database.
    const handle = await createDb(app.config.databaseUrl);
    const restarted = await startSecondApp(app, { db: handle });
    try {
      expect(restarted.services.state).not.toBe(app.state);
      const again = await createChannel(restarted, idempotencyKey, body);
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.id).toBe(first.body.id);
      expect(await channelsNamed(body.indexName)).toBe(1);
    } finally {
      await restarted.close();
      await handle.db.$disconnect();
    }
  });

  const redisUrl = process.env.TEST_REDIS_URL;
  (redisUrl ? test : test.skip)(
    'with Redis, two nodes and a node started afresh see the same keys',
    async () => {
      const url = redisUrl as string;
      const connections = [createRedis(url), createRedis(url), createRedis(url)];
      const [one, two, three] = connections as [
        ReturnType<typeof createRedis>,
        ...ReturnType<typeof createRedis>[],
      ];
      const first = await startTestApp({ redis: one });
      try {
        await loadFixture(first);
        const redisKey = await first.createApiKey(['Channels']);
        const second = await startSecondApp(first, { redis: two });
        const idempotencyKey = randomUUID();
        const body = channelBody('redis-node');
        const created = await createChannel(first, idempotencyKey, body, redisKey);
        expect(created.status).toBe(200);
        expect(first.state.kind).toBe('redis');
        const fromSecond = await createChannel(second, idempotencyKey, body, redisKey);
        expect(fromSecond.headers['idempotent-replayed']).toBe('true');
        expect(fromSecond.body.id).toBe(created.body.id);
        await second.close();
        const fresh = await startSecondApp(first, { redis: three as ReturnType<typeof createRedis> });
        const fromFresh = await createChannel(fresh, idempotencyKey, body, redisKey);
        expect(fromFresh.headers['idempotent-replayed']).toBe('true');
        expect(fromFresh.body.id).toBe(created.body.id);
        await fresh.close();
        expect(await first.db.channel.count({ where: { indexName: 'redis-node' } })).toBe(1);
      } finally {
        await first.close();
        for (const connection of connections) await connection.quit();
      }
    },
  );
});
