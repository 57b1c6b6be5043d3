import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Redis } from 'ioredis';
import type supertest from 'supertest';
import { contract } from '../../src/contract.ts';
import { createRedis } from '../../src/db/redis.ts';
import { hashPlainPassword, md5Hex } from '../../src/domain/accounts/passwords.ts';
import { type SecondApp, startSecondApp, startTestApp, type TestApp } from '../support/app.ts';

/*
 * Each worker caches credentials that authenticated (src/http/credentialCache.ts), with Redis. A
 * key deleted, reset or a token logged out on one node must fail on the very next request on any
 * node: two apps over one database and one Redis stand for two nodes. (Run with TEST_REDIS_URL;
 * skipped otherwise, since without Redis nothing is cached.)
 */

test('the operations able to change a key or an account are those the contract marks x-changes-credentials', () => {
  const changing = contract.operations
    .filter((operation) => operation.changesCredentials)
    .map((operation) => operation.operationId);
  expect(changing.sort()).toEqual(
    [
      'updateApiKey',
      'deleteApiKey',
      'resetApiKey',
      'loginUser',
      'logoutUser',
      'resetUserPassword',
      'loginAdministrator',
      'logoutAdministrator',
      'resetAdministratorPassword',
      'updateAdministrator',
      'deleteAdministrator',
      'updateUser',
      'deleteUser',
      'clearCache',
    ].sort(),
  );
});

const redisUrl = process.env.TEST_REDIS_URL;

(redisUrl ? describe : describe.skip)('two nodes sharing the database and Redis', () => {
  let first: TestApp;
  let secondNode: SecondApp;
  let second: supertest.Agent;
  let redisA: Redis;
  let redisB: Redis;
  let admin: string;

  beforeAll(async () => {
    redisA = createRedis(redisUrl as string);
    redisB = createRedis(redisUrl as string);
    first = await startTestApp({ redis: redisA, config: { credentialCacheSeconds: 60 } });
    secondNode = await startSecondApp(first, { redis: redisB });
    second = secondNode.request;
    admin = await first.createApiKey('all');
  });

  afterAll(async () => {
    await secondNode?.close();
    await first?.close();
    await redisA?.quit();
    await redisB?.quit();
  });

  const list = (agent: supertest.Agent, key: string) => agent.get('/api/v1/apiKeys').set('X-SS-API-KEY', key);

  async function issue(scopes: string[]): Promise<{ key: string; id: number }> {
    const created = await first.request
      .post('/api/v1/apiKeys')
      .set('X-SS-API-KEY', admin)
      .send({ title: 'cached', scopes });
    expect(created.status).toBe(201);
    return { key: created.body.key, id: created.body.apiKey.id };
  }

  test('a key is looked up once per node: a row removed behind the service keeps working where it is cached', async () => {
    const { key, id } = await issue(['ApiKeys']);
    expect((await list(second, key)).status).toBe(200);
    // Removed without going through the service: no node is told, so the node that cached it
    // still lets it in (this is what the cache saves), while the other one looks it up and refuses.
    await first.db.apiKey.delete({ where: { id } });
    expect((await list(second, key)).status).toBe(200);
    expect((await list(first.request, key)).status).toBe(401);
  });

  test('a key deleted on one node fails on the very next request on the other', async () => {
    const { key, id } = await issue(['ApiKeys']);
    expect((await list(second, key)).status).toBe(200);
    expect((await list(second, key)).status).toBe(200);
    const deleted = await first.request
      .post(`/api/v1/apiKeys/${id}/actions/delete`)
      .set('X-SS-API-KEY', admin);
    expect(deleted.status).toBe(200);
    const refused = await list(second, key);
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('The API key is not valid');
  });

  test('a key reset on one node: the old key fails on the other at once, the new one works', async () => {
    const { key, id } = await issue(['ApiKeys']);
    expect((await list(second, key)).status).toBe(200);
    const reset = await first.request.post(`/api/v1/apiKeys/${id}/actions/reset`).set('X-SS-API-KEY', admin);
    expect(reset.status).toBe(200);
    expect((await list(second, key)).status).toBe(401);
    expect((await list(second, reset.body.key)).status).toBe(200);
  });

  test('an administrator token logged out on one node fails on the very next request on the other', async () => {
    const password = 'Meadow-88-Lantern';
    await first.db.administrator.create({
      data: { userName: 'cachechief', ...(await hashPlainPassword(password)) },
    });
    const login = await first.request
      .post('/api/v1/administrators/actions/login')
      .send({ account: 'cachechief', password: md5Hex(password) });
    expect(login.status).toBe(200);
    const token: string = login.body.accessToken;
    const users = () => second.get('/api/v1/users').set('Authorization', `Bearer ${token}`);
    expect((await users()).status).toBe(200);
    expect((await users()).status).toBe(200);
    const logout = await first.request
      .post('/api/v1/administrators/actions/logout')
      .set('Authorization', `Bearer ${token}`);
    expect(logout.status).toBe(200);
    const refused = await users();
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('The access token has been revoked (logout, password change or lock)');
  });
});
