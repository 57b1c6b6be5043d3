import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { loadContract } from '../../src/contract.ts';
import { createRedis } from '../../src/db/redis.ts';
import { handlers, missingOperationIds } from '../../src/operations/registry.ts';
import { ping } from '../../src/operations/system/ping.ts';
import { WITHOUT_REDIS } from '../../src/operations/system/readyz.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

let app: TestApp;
let typed: TypedClient;

beforeAll(async () => {
  app = await startTestApp();
  typed = await startClient(app);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

describe('system operations', () => {
  test('ping answers pong as text/plain without credentials', async () => {
    const { data, response } = await typed.client.GET('/api/v1/ping', { parseAs: 'text' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(data).toBe('pong');
  });

  test('an apiKey query parameter is not an unknown parameter, even on a public operation', async () => {
    // Not through the typed client: the contract lists no query parameter for ping.
    const response = await app.request.get('/api/v1/ping').query({ apiKey: 'anything' });
    expect(response.status).toBe(200);
    expect(response.text).toBe('pong');
  });

  test('healthz answers {status: ok}', async () => {
    const { data, response } = await typed.client.GET('/healthz');
    expect(response.status).toBe(200);
    expect(data).toEqual({ status: 'ok' });
  });

  test('readyz answers {status: ok} when the database answers', async () => {
    const { data, response } = await typed.client.GET('/readyz');
    expect(response.status).toBe(200);
    expect(data).toEqual({ status: 'ok' });
  });
});

describe('readyz with Redis configured', () => {
  test('is 200 degraded, naming Redis and what fails open without it, never its address or password, when Redis does not answer', async () => {
    // Nothing listens on port 1: connections are refused at once.
    const unreachable = createRedis('redis://:hunter2@127.0.0.1:1');
    const down = await startTestApp({ redis: unreachable });
    try {
      const response = await down.request.get('/readyz');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'degraded', degraded: [WITHOUT_REDIS] });
      expect(response.text).not.toContain('hunter2');
      expect(response.text).not.toContain('127.0.0.1');
      // The node serves meanwhile: counters fail open.
      expect((await down.request.get('/api/v1/ping')).status).toBe(200);
      expect((await down.request.get('/healthz')).status).toBe(200);
    } finally {
      await down.close();
      unreachable.disconnect();
    }
  });

  const redisUrl = process.env.TEST_REDIS_URL;
  (redisUrl ? test : test.skip)('answers {status: ok} when the database and Redis answer', async () => {
    const redis = createRedis(redisUrl as string);
    const up = await startTestApp({ redis });
    try {
      const response = await up.request.get('/readyz');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ok' });
    } finally {
      await up.close();
      await redis.quit();
    }
  });
});

describe('missingOperationIds', () => {
  test('lists exactly the operations of the contract that have no handler', async () => {
    const operationIds = (await loadContract()).operations.map((operation) => operation.operationId);
    const missing = missingOperationIds();
    expect(missing).toEqual(operationIds.filter((id) => !(id in handlers)));
    for (const implemented of ['ping', 'healthz', 'readyz', 'getChannel', 'getContent']) {
      expect(operationIds).toContain(implemented);
      expect(missing).not.toContain(implemented);
    }
  });

  test('names every operation of the contract for a registry with only ping', () => {
    const missing = missingOperationIds({ ping });
    expect(missing).toContain('healthz');
    expect(missing).toContain('readyz');
    expect(missing).toContain('listContents');
    expect(missing).not.toContain('ping');
  });
});
