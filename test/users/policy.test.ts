import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { loadConfig } from '../../src/config.ts';
import { md5Hex } from '../../src/domain/accounts/passwords.ts';
import { attemptKeys } from '../../src/domain/logins/attempts.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

/* The lockout and the password rule follow the operator's settings (LOCKOUT_*, PASSWORD_MIN_LENGTH). */

let app: TestApp;
let typed: TypedClient;

beforeAll(async () => {
  const { accounts } = loadConfig({
    LOCKOUT_FAILURES: '2',
    LOCKOUT_MINUTES: '30',
    PASSWORD_MIN_LENGTH: '10',
  });
  app = await startTestApp({ config: { accounts } });
  typed = await startClient(app, await app.createApiKey(['Users', 'Administrators', 'Contents', 'Channels']));
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

test('a new password shorter than PASSWORD_MIN_LENGTH is a 400; one that meets it is stored', async () => {
  const short = await typed.client.POST('/api/v1/users', {
    body: { userName: 'short', password: 'Abcdefg12' },
  });
  expect(short.response.status).toBe(400);
  expect(short.error?.errors).toEqual([
    { path: '/body/password', message: 'must be at least 10 characters with a letter and a digit' },
  ]);
  const long = await typed.client.POST('/api/v1/users', {
    body: { userName: 'long', password: 'Abcdefg123' },
  });
  expect(long.response.status).toBe(200);
  const change = await typed.client.POST('/api/v1/users/actions/resetPassword', {
    body: { account: 'long', password: md5Hex('Abcdefg123'), newPassword: 'Short12' },
  });
  expect(change.response.status).toBe(400);
  expect(change.error?.errors?.[0]?.path).toBe('/body/newPassword');
});

test('LOCKOUT_FAILURES wrong passwords in a row lock the account for this address for LOCKOUT_MINUTES', async () => {
  await typed.client.POST('/api/v1/users', { body: { userName: 'locky', password: 'Locky12345' } });
  const login = (password: string) =>
    typed.clientAs({}).POST('/api/v1/users/actions/login', {
      body: { account: 'locky', password: md5Hex(password) },
    });
  expect((await login('wrong-1')).response.status).toBe(401);
  expect((await login('wrong-2')).response.status).toBe(401);
  // Locked after two: the right password fails too, for thirty minutes.
  expect((await login('Locky12345')).response.status).toBe(401);
  const lock = await app.state.get(
    attemptKeys({ kind: 'users', account: 'locky', address: '127.0.0.1' }).lock,
  );
  const minutes = ((lock?.resetAt.getTime() ?? 0) - Date.now()) / 60_000;
  expect(minutes).toBeGreaterThan(29);
  expect(minutes).toBeLessThanOrEqual(30);
});
