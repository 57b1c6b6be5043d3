import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import type supertest from 'supertest';
import { runCli } from '../../src/cli/run.ts';
import { hashPlainPassword, md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import { type SecondApp, startSecondApp, startTestApp, type TestApp } from '../support/app.ts';

/*
 * Every revocation reaches every node at once (docs/security/credentials.md "Revocation"): with
 * Redis each worker keeps credentials that authenticated lately (src/http/credentialCache.ts), so a
 * revocation must reach those caches whatever path made it — the command-line tool too — and even
 * when Redis was unreachable at the moment of the revocation. Two apps over one database stand for
 * two nodes; each reaches Redis through a TCP proxy this file controls, so that an outage can be
 * made without touching the Redis others use. (Run with TEST_REDIS_URL; skipped otherwise.)
 */

const redisUrl = process.env.TEST_REDIS_URL;

/** A TCP proxy to Redis that can be cut (every connection dropped, new ones refused) and restored. */
class CuttableProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

/** A client of the service's kind, through the proxy, waiting a little longer on a busy machine. */
function nodeRedis(port: number, db: string): Redis {
  const redis = new Redis(`redis://127.0.0.1:${port}/${db}`, {
    maxRetriesPerRequest: 1,
    commandTimeout: 5000,
    lazyConnect: true,
    retryStrategy: () => 100,
  });
  redis.on('error', () => {});
  return redis;
}

/** A port nothing listens on (it did a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not in time`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

(redisUrl ? describe : describe.skip)('revocation on every node, with Redis', () => {
  let proxy: CuttableProxy;
  let redisA: Redis;
  let redisB: Redis;
  let first: TestApp;
  let secondNode: SecondApp;
  let second: supertest.Agent;
  let admin: string;

  beforeAll(async () => {
    const target = new URL(redisUrl as string);
    proxy = new CuttableProxy({ host: target.hostname, port: Number(target.port || 6379) });
    await proxy.open();
    const db = target.pathname.replace('/', '') || '0';
    redisA = nodeRedis(proxy.port, db);
    redisB = nodeRedis(proxy.port, db);
    first = await startTestApp({ redis: redisA, config: { credentialCacheSeconds: 300 } });
    secondNode = await startSecondApp(first, { redis: redisB });
    second = secondNode.request;
    admin = await first.createApiKey('all');
  });

  afterAll(async () => {
    await secondNode?.close();
    await first?.close();
    redisA?.disconnect();
    redisB?.disconnect();
    await proxy?.cut();
  });

  let serial = 0;
  async function administratorToken() {
    serial += 1;
    const userName = `revoked${serial}`;
    const password = `Revoked-${serial}-pass`;
    await first.db.administrator.create({ data: { userName, ...(await hashPlainPassword(password)) } });
    const login = await first.request
      .post('/api/v1/administrators/actions/login')
      .send({ account: userName, password: md5Hex(password) });
    expect(login.status).toBe(200);
    return { userName, token: login.body.accessToken as string };
  }

  const users = (agent: supertest.Agent, token: string) =>
    agent.get('/api/v1/users').set('Authorization', `Bearer ${token}`);

  /** The second node has the token cached: a row changed behind the service would not reach it. */
  async function cachedOnSecond(token: string) {
    expect((await users(second, token)).status).toBe(200);
    expect((await users(second, token)).status).toBe(200);
  }

  async function outage(during: () => Promise<void>) {
    await proxy.cut();
    await waitFor(() => redisA.status !== 'ready' && redisB.status !== 'ready', 'both nodes see Redis go');
    await during();
    await proxy.open();
    await waitFor(() => redisA.status === 'ready' && redisB.status === 'ready', 'both nodes reconnect');
  }

  test('a password set with `cms password` ends the token on every node at once', async () => {
    const { userName, token } = await administratorToken();
    await cachedOnSecond(token);
    const lines: string[] = [];
    const code = await runCli(
      ['password', 'administrator', userName],
      {
        out: (line) => lines.push(line),
        err: (line) => lines.push(line),
        readLine: async () => 'Brand-New-Pass-9',
      },
      {
        DATABASE_URL: first.config.databaseUrl,
        REDIS_URL: redisUrl,
        REDIS_KEY_PREFIX: first.config.redisKeyPrefix,
      },
    );
    expect(lines).toEqual([`New password set for administrator '${userName}'.`]);
    expect(code).toBe(0);
    const refused = await users(second, token);
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('The access token has been revoked (logout, password change or lock)');
  });

  test('`cms password` changes nothing when the Redis it must tell does not answer', async () => {
    const { userName, token } = await administratorToken();
    await cachedOnSecond(token);
    const errors: string[] = [];
    const code = await runCli(
      ['password', 'administrator', userName],
      { out: () => {}, err: (line) => errors.push(line), readLine: async () => 'Never-Set-Pass-1' },
      {
        DATABASE_URL: first.config.databaseUrl,
        REDIS_URL: `redis://127.0.0.1:${await closedPort()}/0`,
        REDIS_KEY_PREFIX: first.config.redisKeyPrefix,
      },
    );
    expect(code).toBe(1);
    expect(errors.join('\n')).toContain('Redis does not answer there; nothing was changed');
    const row = await first.db.administrator.findUniqueOrThrow({ where: { userName } });
    expect(await verifyMd5Password(md5Hex('Never-Set-Pass-1'), row)).toBe(false);
    expect((await users(second, token)).status).toBe(200);
  });

  test('a logout made while Redis is unreachable still ends the token on the other node once it is back', async () => {
    const { token } = await administratorToken();
    await cachedOnSecond(token);
    await outage(async () => {
      const logout = await first.request
        .post('/api/v1/administrators/actions/logout')
        .set('Authorization', `Bearer ${token}`);
      expect(logout.status).toBe(200);
    });
    const refused = await users(second, token);
    expect(refused.status).toBe(401);
    expect((await users(first.request, token)).status).toBe(401);
  });

  test('a key deleted while Redis is unreachable fails on the other node once it is back', async () => {
    const created = await first.request
      .post('/api/v1/apiKeys')
      .set('X-SS-API-KEY', admin)
      .send({ title: 'deleted in the dark', scopes: ['ApiKeys'] });
    expect(created.status).toBe(201);
    const key: string = created.body.key;
    const list = () => second.get('/api/v1/apiKeys').set('X-SS-API-KEY', key);
    expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(200);
    await outage(async () => {
      const deleted = await first.request
        .post(`/api/v1/apiKeys/${created.body.apiKey.id}/actions/delete`)
        .set('X-SS-API-KEY', admin);
      expect(deleted.status).toBe(200);
    });
    const refused = await list();
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('The API key is not valid');
  });

  test('a node that alone lost Redis tells the others of its revocation as soon as it is back', async () => {
    // A third node reaches Redis directly: it never sees the outage, and keeps its connection.
    const direct = new Redis(redisUrl as string, {
      maxRetriesPerRequest: 1,
      commandTimeout: 5000,
      lazyConnect: true,
    });
    direct.on('error', () => {});
    const thirdNode = await startSecondApp(first, { redis: direct });
    try {
      const { token } = await administratorToken();
      expect((await users(thirdNode.request, token)).status).toBe(200);
      expect((await users(thirdNode.request, token)).status).toBe(200);
      await outage(async () => {
        const logout = await first.request
          .post('/api/v1/administrators/actions/logout')
          .set('Authorization', `Bearer ${token}`);
        expect(logout.status).toBe(200);
      });
      // No request reaches the first node again: its reconnection alone advances the generation.
      await waitFor(
        async () => (await users(thirdNode.request, token)).status === 401,
        'the third node refuses',
      );
    } finally {
      await thirdNode.close();
      direct.disconnect();
    }
  });
});
