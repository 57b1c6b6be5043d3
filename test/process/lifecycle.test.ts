import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { afterEach, expect, test } from '@jest/globals';
import { SECRET_SETTING_KEY } from '../../src/config.ts';
import { createDb } from '../../src/db/client.ts';
import { md5Hex } from '../../src/domain/accounts/passwords.ts';
import { createEmptyDatabase, type EmptyDatabase } from '../support/database.ts';
import { bootstrapKeyOf, freePort, post, startService } from './processes.ts';

/*
 * The real process, as `npm start` runs it: first start on an empty database (migrate, seed when
 * asked, print a key and the demo passwords), and a graceful stop on SIGTERM that lets a request in
 * flight finish. The first test runs one process without supervisor (WORKERS=0), in which the port
 * is refused the moment shutdown begins; the supervised default is covered by restart.test.ts.
 */

let child: ChildProcess | undefined;
let database: EmptyDatabase | undefined;

afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await database?.drop();
});

const start = startService;

test('first start with SEED_DEMO seeds the demo; SIGTERM lets the request in flight finish, refuses new ones, exits 0', async () => {
  database = await createEmptyDatabase();
  const port = await freePort();
  const service = start({ DATABASE_URL: database.url, PORT: String(port), SEED_DEMO: 'true', WORKERS: '0' });
  child = service.process;
  await service.waitFor(/"msg":"listening"/);
  const key = bootstrapKeyOf(service.output());
  expect(key).toMatch(/^cms_[\w-]{43}$/);
  const passwords = [...service.output().matchAll(/(?:User|Administrator): +\S+ \/ ([\w-]{16})\n/g)].map(
    (match) => match[1],
  );
  expect(passwords).toHaveLength(2);
  expect(service.output()).toContain(`curl -s -X POST http://localhost:${port}/api/v1/contents`);

  const body = JSON.stringify({ siteId: 1, perPage: 5 });
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/contents',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'X-SS-API-KEY': key,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    // Half the body now: the request is in flight when the signal arrives.
    req.write(body.slice(0, 10));
    setTimeout(() => {
      child?.kill('SIGTERM');
      setTimeout(() => req.end(body.slice(10)), 500);
    }, 200);
  });

  await service.waitFor(/shutting down/);
  const refused = await new Promise<string>((resolve) => {
    const late = request({ host: '127.0.0.1', port, path: '/api/v1/ping' }, () => resolve('answered'));
    late.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    late.end();
  });
  expect(refused).toBe('ECONNREFUSED');

  const { status, text } = await answer;
  expect(status).toBe(200);
  const page = JSON.parse(text);
  expect(page.totalCount).toBe(40);
  expect(page.contents).toHaveLength(5);
  expect(await service.exited).toBe(0);
  expect(service.output()).toContain('"msg":"stopped"');
  // The key is printed once at the first start; the request logs after it never show it.
  const requestLogs = service.output().split('"msg":"listening"')[1] ?? '';
  expect(requestLogs).toContain('"statusCode":200');
  expect(requestLogs).not.toContain(key);
  for (const password of passwords) expect(requestLogs).not.toContain(password);
});

test('a configured database is not seeded unless SEED_DEMO asks for it', async () => {
  database = await createEmptyDatabase();
  const port = await freePort();
  const service = start({ DATABASE_URL: database.url, PORT: String(port) });
  child = service.process;
  await service.waitFor(/"msg":"listening"/);
  expect(service.output()).not.toContain('Seeded');
  expect(bootstrapKeyOf(service.output())).toBeUndefined();
  // Without a printed key, the start says how to get one.
  expect(service.output()).toContain('npm run cms -- apikey create --title \\"my client\\" --scopes all');
  child.kill('SIGTERM');
  expect(await service.exited).toBe(0);
  const { db } = await createDb(database.url);
  try {
    expect([await db.site.count(), await db.user.count(), await db.apiKey.count()]).toEqual([0, 0, 0]);
  } finally {
    await db.$disconnect();
  }
});

test('the first start settles the token secret, once: an access token issued before a restart is accepted after it', async () => {
  database = await createEmptyDatabase();
  const port = await freePort();
  // Supervised, without CMS_SECRET: the supervisor stores the secret before its worker signs anything.
  const env = { DATABASE_URL: database.url, PORT: String(port), WORKERS: '1' };
  const first = start({ ...env, SEED_DEMO: 'true' });
  child = first.process;
  await first.waitFor(/"msg":"worker listening"/);
  const [, account = '', password = ''] = /Administrator: +(\S+) \/ ([\w-]{16})\n/.exec(first.output()) ?? [];
  const login = await post(port, '/api/v1/administrators/actions/login', {
    account,
    password: md5Hex(password),
  });
  expect(login.status).toBe(200);
  const { accessToken } = login.json as { accessToken: string };
  const list = () =>
    post(port, '/api/v1/contents', { siteId: 1, perPage: 1 }, { Authorization: `Bearer ${accessToken}` });
  expect((await list()).status).toBe(200);
  first.process.kill('SIGTERM');
  expect(await first.exited).toBe(0);

  // The second start finds the migrations applied and a site: nothing to migrate or seed.
  const second = start(env);
  child = second.process;
  await second.waitFor(/"msg":"worker listening"/);
  expect(second.output()).not.toContain('Seeded');
  expect(second.output()).not.toContain('applied');
  const after = await list();
  expect(after.status).toBe(200);
  expect((after.json as { totalCount: number }).totalCount).toBe(40);
  second.process.kill('SIGTERM');
  expect(await second.exited).toBe(0);
  const { db } = await createDb(database.url);
  try {
    expect(await db.systemSetting.count({ where: { key: SECRET_SETTING_KEY } })).toBe(1);
  } finally {
    await db.$disconnect();
  }
});

test('an invalid configuration stops the start with a message naming the variable', async () => {
  const service = start({ PORT: 'abc', DATABASE_URL: 'file:/nonexistent/never-created.db' });
  child = service.process;
  expect(await service.exited).toBe(1);
  expect(service.output()).toContain('PORT must be an integer from 1 to 65535');
  // The workers, forked before the configuration was read (WORKERS is valid), stop without saying it again.
  expect(service.output().match(/PORT must be/g)).toHaveLength(1);
});

test('a configured Redis that does not answer stops the start, without repeating the URL', async () => {
  database = await createEmptyDatabase();
  const service = start({
    DATABASE_URL: database.url,
    PORT: String(await freePort()),
    REDIS_URL: 'redis://:hunter2@127.0.0.1:1',
  });
  child = service.process;
  expect(await service.exited).toBe(1);
  expect(service.output()).toContain('REDIS_URL is set but Redis does not answer there');
  expect(service.output()).not.toContain('hunter2');
});
