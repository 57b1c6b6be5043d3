import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { hashPlainPassword, md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import { signAccessToken } from '../../src/domain/crypto/tokens.ts';
import { attemptKeys } from '../../src/domain/logins/attempts.ts';
import { LOCKOUT_FAILURES } from '../../src/domain/logins/policy.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

let app: TestApp;
let key: string;
let typed: TypedClient;
/** A client with every scope: what setting an administrator's password or unlocking it needs. */
let full: TypedClient['client'];

beforeAll(async () => {
  app = await startTestApp();
  key = await app.createApiKey(['Administrators']);
  typed = await startClient(app, key);
  full = typed.clientAs({ apiKey: await app.createApiKey('all') });
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

const ADDRESS_COUNTER = attemptKeys({ kind: 'administrators', account: '', address: '127.0.0.1' }).address;
beforeEach(() => app.state.reset(ADDRESS_COUNTER));

const LOGIN_FAILED = {
  type: `${PROBLEM_TYPE_BASE}login-failed`,
  status: 401,
  detail: 'Wrong account or password, or the account cannot log in now',
};

let serial = 0;
/** An administrator stored directly (no operation creates one), with its plain password. */
async function newAdministrator(fields: { isLockedOut?: boolean } = {}) {
  serial += 1;
  const password = `Admin${serial}pass`;
  const row = await app.db.administrator.create({
    data: {
      userName: `admin${serial}`,
      displayName: `Administrator ${serial}`,
      email: `admin${serial}@example.com`,
      mobile: `+3370000${String(serial).padStart(4, '0')}`,
      siteId: 1,
      siteIdCollection: '1,2',
      ...(await hashPlainPassword(password)),
      ...fields,
    },
  });
  return { row, password };
}

const login = (account: string, password: string) =>
  typed.clientAs({}).POST('/api/v1/administrators/actions/login', {
    body: { account, password: md5Hex(password) },
  });

describe('GET /api/v1/administrators', () => {
  test('pages by id; out-of-range and non-numbers are clamped; no password material', async () => {
    for (let i = 0; i < 3; i += 1) await newAdministrator();
    const ids = (await app.db.administrator.findMany({ orderBy: { id: 'asc' } })).map((row) => row.id);
    const list = async (query: Record<string, string | number>) => {
      const response = await app.request.get('/api/v1/administrators').set('X-SS-API-KEY', key).query(query);
      expect(response.status).toBe(200);
      return response.body.value.map((a: { id: number }) => a.id);
    };
    expect(await list({})).toEqual(ids);
    expect(await list({ page: 2, perPage: 1 })).toEqual(ids.slice(1, 2));
    expect(await list({ page: 'x', perPage: '-3' })).toEqual(ids.slice(0, 1));
    const { data } = await typed.client.GET('/api/v1/administrators', { params: { query: { perPage: 1 } } });
    expect(data?.value[0]).toMatchObject({
      id: ids[0],
      userName: 'admin1',
      displayName: 'Administrator 1',
      password: '',
      passwordSalt: '',
      passwordFormat: 'Hashed',
      siteId: 1,
      siteIdCollection: '1,2',
      isLockedOut: false,
    });
  });

  test('no credentials is a 401; a key without the Administrators scope is a 403', async () => {
    expect((await typed.clientAs({}).GET('/api/v1/administrators', {})).response.status).toBe(401);
    const usersKey = await app.createApiKey(['Users']);
    const forbidden = await typed.clientAs({ apiKey: usersKey }).GET('/api/v1/administrators', {});
    expect(forbidden.response.status).toBe(403);
  });
});

describe('POST /api/v1/administrators/{id}/actions/update', () => {
  const update = (id: number, body: Record<string, string | number>, client = typed.client) =>
    client.POST('/api/v1/administrators/{id}/actions/update', { params: { path: { id } }, body });

  test('changes only the fields given; a new password is hashed and ends older tokens', async () => {
    const { row, password } = await newAdministrator();
    const token = (await login(row.userName, password)).data?.accessToken ?? '';
    const { data, response } = await update(
      row.id,
      {
        displayName: 'Eva Martin-Leroy',
        email: 'eva.leroy@example.com',
        mobile: '',
        password: 'Blue-Harbour-42',
        departmentId: 2,
        creationDate: '2024-01-20 14:30:00',
      },
      full,
    );
    expect(response.status).toBe(200);
    expect(data?.value).toMatchObject({
      id: row.id,
      userName: row.userName,
      displayName: 'Eva Martin-Leroy',
      email: 'eva.leroy@example.com',
      mobile: '',
      departmentId: 2,
      creationDate: '2024-01-20 14:30:00',
      password: '',
      passwordSalt: '',
    });
    const stored = await app.db.administrator.findUniqueOrThrow({ where: { id: row.id } });
    expect(stored.mobile).toBeNull();
    expect(await verifyMd5Password(md5Hex('Blue-Harbour-42'), stored)).toBe(true);
    const stale = await typed.clientAs({ bearerToken: token }).GET('/api/v1/administrators', {});
    expect(stale.response.status).toBe(401);
  });

  test('an empty password leaves it unchanged (a listed record can be sent back)', async () => {
    const { row, password } = await newAdministrator();
    const { data } = await typed.client.GET('/api/v1/administrators', {
      params: { query: { perPage: 1000 } },
    });
    const listed = data?.value.find((a) => a.id === row.id);
    if (listed === undefined) throw new Error('not listed');
    const { isLockedOut: _locked, ...sent } = listed;
    const { response } = await typed.client.POST('/api/v1/administrators/{id}/actions/update', {
      params: { path: { id: row.id } },
      body: sent,
    });
    expect(response.status).toBe(200);
    expect((await login(row.userName, password)).response.status).toBe(200);
  });

  test('isLockedOut locks (tokens end, login refused) and unlocks (lockout ends too)', async () => {
    const { row, password } = await newAdministrator();
    const token = (await login(row.userName, password)).data?.accessToken ?? '';
    const locked = await update(row.id, { isLockedOut: 'true' });
    expect(locked.data?.value.isLockedOut).toBe(true);
    expect(
      (await typed.clientAs({ bearerToken: token }).GET('/api/v1/administrators', {})).response.status,
    ).toBe(401);
    expect((await login(row.userName, password)).error).toMatchObject(LOGIN_FAILED);
    await app.db.administrator.update({
      where: { id: row.id },
      data: { lockedUntil: new Date(Date.now() + 60_000), countOfFailedLogin: 5 },
    });
    const unlocked = await update(row.id, { isLockedOut: 'false' }, full);
    expect(unlocked.data?.value).toMatchObject({ isLockedOut: false, countOfFailedLogin: 0 });
    expect((await login(row.userName, password)).response.status).toBe(200);
  });

  test('a user name, e-mail or mobile of another administrator is a 409; its own values are fine', async () => {
    const { row } = await newAdministrator();
    const other = await newAdministrator();
    const own = await update(row.id, { userName: row.userName, email: row.email ?? '' });
    expect(own.response.status).toBe(200);
    const { error, response } = await update(row.id, {
      userName: other.row.userName,
      email: other.row.email ?? '',
      mobile: other.row.mobile ?? '',
    });
    expect(response.status).toBe(409);
    expect(error?.type).toBe(`${PROBLEM_TYPE_BASE}conflict`);
    expect(error?.errors?.map((e) => e.path).sort()).toEqual([
      '/body/email',
      '/body/mobile',
      '/body/userName',
    ]);
  });

  test('a weak password or an impossible date is a 400 and changes nothing', async () => {
    const { row } = await newAdministrator();
    const { error, response } = await update(
      row.id,
      { password: 'abc', displayName: 'Changed', lastActivityDate: '2024-02-30 10:00:00' },
      full,
    );
    expect(response.status).toBe(400);
    expect(error?.errors?.map((e) => e.path)).toEqual(['/body/password', '/body/lastActivityDate']);
    const stored = await app.db.administrator.findUniqueOrThrow({ where: { id: row.id } });
    expect(stored.displayName).toBe(row.displayName);
    expect(stored.passwordHash).toBe(row.passwordHash);
  });

  test('an unknown field is a 400; an unknown administrator a 404', async () => {
    const { row } = await newAdministrator();
    const unknownField = await app.request
      .post(`/api/v1/administrators/${row.id}/actions/update`)
      .set('X-SS-API-KEY', key)
      .send({ nickname: 'x' });
    expect(unknownField.status).toBe(400);
    const missing = await update(999_999, { displayName: 'Ghost' });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.type).toBe(`${PROBLEM_TYPE_BASE}not-found`);
  });
});

describe('POST /api/v1/administrators/actions/login', () => {
  test('answers the administrator and a token that may call every protected operation', async () => {
    const { row, password } = await newAdministrator();
    const { data, response } = await login(row.email ?? '', password);
    expect(response.status).toBe(200);
    expect(data?.administrator).toMatchObject({
      id: row.id,
      countOfLogin: 1,
      password: '',
      passwordSalt: '',
    });
    expect(data?.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const bearer = typed.clientAs({ bearerToken: data?.accessToken ?? '' });
    expect((await bearer.GET('/api/v1/administrators', {})).response.status).toBe(200);
    expect((await bearer.GET('/api/v1/users', {})).response.status).toBe(200);
    expect((await bearer.GET('/api/v1/stl/sites', {})).response.status).toBe(200);
  });

  test('unknown account, wrong password, locked administrator: the same 401; failures lock this address', async () => {
    const { row, password } = await newAdministrator();
    const locked = await newAdministrator({ isLockedOut: true });
    for (const attempt of [
      await login('nobody', password),
      await login(row.userName, 'Wrong1pass'),
      await login(locked.row.userName, locked.password),
    ]) {
      expect(attempt.response.status).toBe(401);
      expect(attempt.error).toMatchObject(LOGIN_FAILED);
    }
    for (let i = 1; i < LOCKOUT_FAILURES; i += 1) await login(row.userName, `Wrong${i}pass`);
    expect((await login(row.userName, password)).error).toMatchObject(LOGIN_FAILED);
    const stored = await app.db.administrator.findUniqueOrThrow({ where: { id: row.id } });
    expect(stored.countOfFailedLogin).toBe(LOCKOUT_FAILURES);
    // Locked for this address only (test/security/loginLimits.test.ts): the account itself is not.
    expect(stored.lockedUntil).toBeNull();
  });

  test('more than 10 failures a minute from one address are a 429 with Retry-After, whatever the accounts', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) statuses.push((await login(`nobody${i}`, 'Wrong1pass')).response.status);
    expect(statuses).toEqual(Array(10).fill(401));
    const limited = await login('nobody-else', 'Wrong1pass');
    expect(limited.response.status).toBe(429);
    expect(Number(limited.response.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('POST /api/v1/administrators/actions/resetPassword', () => {
  const reset = (account: string, password: string, newPassword: string) =>
    typed.client.POST('/api/v1/administrators/actions/resetPassword', {
      body: { account, password: md5Hex(password), newPassword },
    });

  test('changes the password; the old one and older tokens stop working', async () => {
    const { row, password } = await newAdministrator();
    const token = (await login(row.userName, password)).data?.accessToken ?? '';
    const { data, response } = await reset(row.mobile ?? '', password, 'Blue-Harbour-42');
    expect(response.status).toBe(200);
    expect(data?.value).toMatchObject({ id: row.id, password: '', passwordSalt: '' });
    expect((await login(row.userName, password)).response.status).toBe(401);
    expect((await login(row.userName, 'Blue-Harbour-42')).response.status).toBe(200);
    expect((await typed.clientAs({ bearerToken: token }).GET('/api/v1/users', {})).response.status).toBe(401);
  });

  test('a wrong current password is the login 401; a weak new one is a 400', async () => {
    const { row, password } = await newAdministrator();
    expect((await reset(row.userName, 'NotIt123', 'Blue-Harbour-42')).error).toMatchObject(LOGIN_FAILED);
    const weak = await reset(row.userName, password, 'weak');
    expect(weak.response.status).toBe(400);
    expect(weak.error?.errors?.[0]?.path).toBe('/body/newPassword');
    expect((await login(row.userName, password)).response.status).toBe(200);
  });

  test('no credentials is a 401', async () => {
    const response = await typed.clientAs({}).POST('/api/v1/administrators/actions/resetPassword', {
      body: { account: 'x', password: md5Hex('x'), newPassword: 'Strong123' },
    });
    expect(response.response.status).toBe(401);
  });
});

describe('POST /api/v1/administrators/actions/logout', () => {
  test("ends the administrator's token; an API key or a user's token is a 403", async () => {
    const { row, password } = await newAdministrator();
    const bearer = typed.clientAs({
      bearerToken: (await login(row.userName, password)).data?.accessToken ?? '',
    });
    const out = await bearer.POST('/api/v1/administrators/actions/logout', {});
    expect(out.response.status).toBe(200);
    expect(out.data).toEqual({ value: true });
    expect((await bearer.GET('/api/v1/administrators', {})).response.status).toBe(401);
    expect((await typed.client.POST('/api/v1/administrators/actions/logout', {})).response.status).toBe(403);
    const user = await app.db.user.create({
      data: { userName: 'member', passwordHash: 'x', passwordSalt: 'x' },
    });
    const userToken = signAccessToken(
      { id: user.id, kind: 'user', scopes: ['STL'], version: user.tokenVersion },
      app.config.cmsSecret,
      { expiresIn: 600 },
    ).token;
    const asUser = typed.clientAs({ bearerToken: userToken });
    expect((await asUser.POST('/api/v1/administrators/actions/logout', {})).response.status).toBe(403);
    // The user's own token was not ended by that refusal.
    expect((await asUser.POST('/api/v1/users/actions/logout', {})).response.status).toBe(200);
  });
});
