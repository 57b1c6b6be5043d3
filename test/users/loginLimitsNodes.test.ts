import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { md5Hex } from '../../src/domain/accounts/passwords.ts';
import { ADDRESS_FAILURES_PER_MINUTE } from '../../src/domain/logins/policy.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { testRedisKeyPrefix } from '../support/run.ts';

/*
 * The login limits are counted in the shared state: two nodes sharing one Redis count the failures
 * from one address together. (Run with TEST_REDIS_URL; skipped otherwise.)
 */

const redisUrl = process.env.TEST_REDIS_URL;

/**
 * The service's client gives up on a command after a second and the counters then fail open (not
 * counted); on a busy test machine that would turn a 429 into a 401. This test is about sharing, so
 * its clients wait longer.
 */
function patientRedis(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 15_000, lazyConnect: true });
  redis.on('error', () => {});
  return redis;
}

(redisUrl ? describe : describe.skip)('login attempts on several nodes sharing Redis', () => {
  let first: TestApp;
  let second: TestApp;
  let redisA: Redis;
  let redisB: Redis;
  beforeAll(async () => {
    redisA = patientRedis(redisUrl as string);
    redisB = patientRedis(redisUrl as string);
    const config = { redisKeyPrefix: testRedisKeyPrefix() };
    first = await startTestApp({ config, redis: redisA });
    second = await startTestApp({ config, redis: redisB });
  });
  afterAll(async () => {
    await first.close();
    await second.close();
    await redisA.quit();
    await redisB.quit();
  });

  test('failures alternating between the nodes reach one limit', async () => {
    const attempt = (node: TestApp, serial: number) =>
      node.request
        .post('/api/v1/administrators/actions/login')
        .send({ account: `ghost${serial}`, password: md5Hex('Guess-1-pass') });
    const statuses: number[] = [];
    for (let i = 0; i <= ADDRESS_FAILURES_PER_MINUTE; i += 1)
      statuses.push((await attempt(i % 2 ? second : first, i)).status);
    expect(statuses).toEqual([...Array(ADDRESS_FAILURES_PER_MINUTE).fill(401), 429]);
  });
});
