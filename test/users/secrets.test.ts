import { afterAll, beforeAll, expect, test } from '@jest/globals';
import pino from 'pino';
import { hashPlainPassword, md5Hex } from '../../src/domain/accounts/passwords.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/*
 * Drives every user and administrator operation, successes and failures alike, with the service
 * logging everything (trace level), then looks for each secret the test used in every response and
 * every log line: passwords in plain text, their MD5 digests, stored hashes and salts, access tokens
 * (outside the login answer that issues each) and the API key.
 */

const lines: string[] = [];
const bodies: string[] = [];

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({
    logger: pino({ level: 'trace' }, { write: (line: string) => lines.push(line) }),
  });
});
afterAll(() => app.close());

test('no response or log line carries a password, its digest, a token or an API key', async () => {
  const key = await app.createApiKey('all');
  const secrets = new Set<string>([key]);
  const password = 'Orchid-7-Lantern';
  const newPassword = 'Harbour-42-Quartz';
  const adminPassword = 'Admin-99-Meadow';
  const weak = 'weakpassword';
  const wrong = 'Wrong-1-Guess';
  for (const plain of [password, newPassword, adminPassword, weak, wrong]) {
    secrets.add(plain);
    secrets.add(md5Hex(plain));
    secrets.add(md5Hex(plain).toUpperCase());
  }
  const admin = await app.db.administrator.create({
    data: { userName: 'chief', ...(await hashPlainPassword(adminPassword)) },
  });
  for (const stored of [admin.passwordHash, admin.passwordSalt]) secrets.add(stored);

  const call = async (method: 'get' | 'post', path: string, body?: object, bearer?: string) => {
    let request = app.request[method](path);
    if (bearer !== undefined) request = request.set('Authorization', `Bearer ${bearer}`);
    else request = request.set('X-SS-API-KEY', key);
    const response = await (body === undefined ? request : request.send(body));
    // A login answers the token it issues, in `accessToken` and nowhere else; anything else is checked.
    const issued: unknown = response.body?.accessToken;
    bodies.push(
      typeof issued === 'string' ? response.text.replace(`"accessToken":"${issued}"`, '') : response.text,
    );
    return response;
  };

  expect(
    (await call('post', '/api/v1/users', { userName: 'lisa', password, email: 'l@example.com' })).status,
  ).toBe(200);
  const stored = await app.db.user.findUniqueOrThrow({ where: { userName: 'lisa' } });
  secrets.add(stored.passwordHash);
  secrets.add(stored.passwordSalt);
  expect((await call('post', '/api/v1/users', { userName: 'weak', password: weak })).status).toBe(400);
  expect((await call('post', '/api/v1/users', { userName: 'lisa', password })).status).toBe(409);
  expect((await call('get', '/api/v1/users')).status).toBe(200);

  const userLogin = await call('post', '/api/v1/users/actions/login', {
    account: 'lisa',
    password: md5Hex(password),
  });
  expect(userLogin.status).toBe(200);
  const userToken: string = userLogin.body.accessToken;
  secrets.add(userToken);
  expect(
    (await call('post', '/api/v1/users/actions/login', { account: 'lisa', password: md5Hex(wrong) })).status,
  ).toBe(401);
  expect(
    (await call('post', '/api/v1/users/actions/login', { account: 'lisa', password: wrong })).status,
  ).toBe(400);
  const reset = { account: 'lisa', password: md5Hex(password), newPassword };
  expect(
    (await call('post', '/api/v1/users/actions/resetPassword', { ...reset, newPassword: weak })).status,
  ).toBe(400);
  expect((await call('post', '/api/v1/users/actions/resetPassword', reset)).status).toBe(200);
  expect((await call('get', '/api/v1/users', undefined, userToken)).status).toBe(401);
  const again = await call('post', '/api/v1/users/actions/login', {
    account: 'lisa',
    password: md5Hex(newPassword),
  });
  secrets.add(again.body.accessToken);
  expect((await call('post', '/api/v1/users/actions/logout', undefined, again.body.accessToken)).status).toBe(
    200,
  );

  const adminLogin = await call('post', '/api/v1/administrators/actions/login', {
    account: 'chief',
    password: md5Hex(adminPassword),
  });
  expect(adminLogin.status).toBe(200);
  const adminToken: string = adminLogin.body.accessToken;
  secrets.add(adminToken);
  expect((await call('get', '/api/v1/administrators', undefined, adminToken)).status).toBe(200);
  expect(
    (await call('post', `/api/v1/administrators/${admin.id}/actions/update`, { password: weak }, adminToken))
      .status,
  ).toBe(400);
  expect(
    (
      await call('post', '/api/v1/administrators/actions/resetPassword', {
        account: 'chief',
        password: md5Hex(wrong),
        newPassword,
      })
    ).status,
  ).toBe(401);
  expect((await call('post', '/api/v1/administrators/actions/logout', undefined, adminToken)).status).toBe(
    200,
  );
  expect((await call('get', '/api/v1/administrators', undefined, adminToken)).status).toBe(401);

  expect(lines.length).toBeGreaterThan(10);
  const text = [...bodies, ...lines].join('\n');
  for (const secret of secrets)
    expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
});
