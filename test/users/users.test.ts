import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import type { CmsClient } from '../../client/src/index.ts';
import { md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import { attemptKeys } from '../../src/domain/logins/attempts.ts';
import { LOCKOUT_FAILURES } from '../../src/domain/logins/policy.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

let app: TestApp;
let key: string;
let typed: TypedClient;

beforeAll(async () => {
  app = await startTestApp();
  // Creating a user hands over a member's reads: its creator carries them (docs/security/credentials.md).
  key = await app.createApiKey(['Users', 'Contents', 'Channels']);
  typed = await startClient(app, key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});
/** The counter of failures from this test's address (every request comes from 127.0.0.1). */
const ADDRESS_COUNTER = attemptKeys({ kind: 'users', account: '', address: '127.0.0.1' }).address;
// The per-address limit has its own test below; the others start with a fresh address counter.
beforeEach(() => app.state.reset(ADDRESS_COUNTER));

const LOGIN_FAILED = {
  type: `${PROBLEM_TYPE_BASE}login-failed`,
  status: 401,
  detail: 'Wrong account or password, or the account cannot log in now',
};

let serial = 0;
/** A user created through the API, with its plain password. */
async function newUser(fields: { checked?: string; locked?: string; openId?: string } = {}) {
  serial += 1;
  const password = `Pass${serial}word`;
  const userName = `member${serial}`;
  const { data, response } = await typed.client.POST('/api/v1/users', {
    body: {
      userName,
      password,
      email: `${userName}@example.com`,
      mobile: `+3360000${String(serial).padStart(4, '0')}`,
      ...fields,
    },
  });
  expect(response.status).toBe(200);
  if (data === undefined) throw new Error('no user');
  return { user: data, userName, password };
}

const login = (account: string, password: string, client: CmsClient = typed.clientAs({})) =>
  client.POST('/api/v1/users/actions/login', { body: { account, password: md5Hex(password) } });

describe('POST /api/v1/users (create)', () => {
  test('answers the user with every field, stores only a slow hash of the MD5', async () => {
    const { data, response } = await typed.client.POST('/api/v1/users', {
      body: {
        userName: 'lisa',
        password: 'Spring2024',
        passwordFormat: 'Encrypt',
        displayName: 'Lisa Chen',
        email: 'lisa@example.com',
        mobile: '+33612345678',
        avatarUrl: '/upload/avatars/12.png',
        openId: 'oX3k9-wechat-7f2a',
        groupId: 3,
        checked: 'true',
        locked: 'false',
      },
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      userName: 'lisa',
      displayName: 'Lisa Chen',
      email: 'lisa@example.com',
      mobile: '+33612345678',
      avatarUrl: '/upload/avatars/12.png',
      openId: 'oX3k9-wechat-7f2a',
      password: '',
      passwordFormat: 'Hashed',
      countOfLogin: 0,
      countOfFailedLogin: 0,
      countOfWriting: 0,
      checked: true,
      locked: false,
    });
    expect(data?.createDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const row = await app.db.user.findUniqueOrThrow({ where: { userName: 'lisa' } });
    expect(row.groupId).toBe(3);
    expect(row.passwordHash).not.toContain(md5Hex('Spring2024'));
    expect(row.passwordHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await verifyMd5Password(md5Hex('Spring2024'), row)).toBe(true);
  });

  test('a minimal user: empty contact fields, approved and unlocked', async () => {
    const { data } = await typed.client.POST('/api/v1/users', {
      body: { userName: 'paul', password: 's3cretPass' },
    });
    expect(data).toMatchObject({ email: '', mobile: '', openId: '', checked: true, locked: false });
    const row = await app.db.user.findUniqueOrThrow({ where: { userName: 'paul' } });
    expect(row.email).toBeNull();
  });

  test('a user name, e-mail or mobile already in use is a 409 naming each field', async () => {
    const { userName, user } = await newUser();
    const { error, response } = await typed.client.POST('/api/v1/users', {
      body: { userName, password: 'Another1', email: user.email, mobile: user.mobile },
    });
    expect(response.status).toBe(409);
    expect(error?.type).toBe(`${PROBLEM_TYPE_BASE}conflict`);
    expect(error?.errors?.map((e) => e.path).sort()).toEqual([
      '/body/email',
      '/body/mobile',
      '/body/userName',
    ]);
    expect(await app.db.user.count({ where: { userName } })).toBe(1);
  });

  test('a weak password or a malformed e-mail is a 400, and nothing is stored', async () => {
    const { error, response } = await typed.client.POST('/api/v1/users', {
      body: { userName: 'weakling', password: 'abcdef', email: 'not-an-address' },
    });
    expect(response.status).toBe(400);
    expect(error?.type).toBe(`${PROBLEM_TYPE_BASE}validation`);
    expect(error?.errors).toEqual([
      { path: '/body/password', message: 'must be at least 6 characters with a letter and a digit' },
      { path: '/body/email', message: 'must be an e-mail address' },
    ]);
    expect(await app.db.user.count({ where: { userName: 'weakling' } })).toBe(0);
  });

  test('a user name against the rules is a 400', async () => {
    const response = await app.request
      .post('/api/v1/users')
      .set('X-SS-API-KEY', key)
      .send({ userName: 'two words', password: 'Strong123' });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].path).toBe('/body/userName');
  });

  test('no credentials is a 401; a key without the Users scope is a 403', async () => {
    const anonymous = await typed.clientAs({}).POST('/api/v1/users', {
      body: { userName: 'nobody', password: 'Strong123' },
    });
    expect(anonymous.response.status).toBe(401);
    const contentsKey = await app.createApiKey(['Contents']);
    const forbidden = await typed.clientAs({ apiKey: contentsKey }).POST('/api/v1/users', {
      body: { userName: 'nobody', password: 'Strong123' },
    });
    expect(forbidden.response.status).toBe(403);
    expect(await app.db.user.count({ where: { userName: 'nobody' } })).toBe(0);
  });
});

describe('GET /api/v1/users (list)', () => {
  test('pages by id with the count of all users; out-of-range and non-numbers are clamped', async () => {
    for (let i = 0; i < 3; i += 1) await newUser();
    const ids = (await app.db.user.findMany({ orderBy: { id: 'asc' }, select: { id: true } })).map(
      (r) => r.id,
    );
    const list = async (query: Record<string, string | number>) => {
      const response = await app.request.get('/api/v1/users').set('X-SS-API-KEY', key).query(query);
      expect(response.status).toBe(200);
      return { count: response.body.count, ids: response.body.users.map((u: { id: number }) => u.id) };
    };
    expect(await list({})).toEqual({ count: ids.length, ids: ids.slice(0, 20) });
    expect(await list({ page: 2, perPage: 2 })).toEqual({ count: ids.length, ids: ids.slice(2, 4) });
    expect(await list({ page: 0, perPage: 2 })).toEqual({ count: ids.length, ids: ids.slice(0, 2) });
    expect(await list({ page: -5, perPage: 0 })).toEqual({ count: ids.length, ids: ids.slice(0, 1) });
    expect(await list({ page: 'abc', perPage: 'x1' })).toEqual({ count: ids.length, ids: ids.slice(0, 20) });
    expect(await list({ page: '99999999999999999999', perPage: 1 })).toEqual({ count: ids.length, ids: [] });
    expect(await list({ perPage: '1000000' })).toEqual({ count: ids.length, ids });
    expect(await list({ page: '', perPage: '1.5' })).toEqual({ count: ids.length, ids: ids.slice(0, 20) });
    expect(await list({ page: 1, perPage: '9'.repeat(70) })).toEqual({ count: ids.length, ids });
  });

  test('the typed client reads users without password material', async () => {
    const { data, response } = await typed.client.GET('/api/v1/users', {
      params: { query: { page: 1, perPage: 1 } },
    });
    expect(response.status).toBe(200);
    expect(data?.users).toHaveLength(1);
    expect(data?.users[0]?.password).toBe('');
  });
});

describe('POST /api/v1/users/actions/login', () => {
  test('by user name, e-mail or mobile: the user, a token that works, its expiry; counts the login', async () => {
    const { userName, password, user } = await newUser();
    for (const [index, account] of [userName, user.email, user.mobile].entries()) {
      const { data, response } = await login(account, password);
      expect(response.status).toBe(200);
      expect(data?.user).toMatchObject({ id: user.id, userName, countOfLogin: index + 1, password: '' });
      expect(data?.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    }
    const { data } = await login(userName, password);
    const bearer = typed.clientAs({ bearerToken: data?.accessToken ?? '' });
    // A member's read: the token reaches the operation (no site 404 here), not a 401 or 403.
    const channel = await bearer.GET('/api/v1/channels/{siteId}/{channelId}', {
      params: { path: { siteId: 999_999, channelId: 1 } },
    });
    expect(channel.response.status).toBe(404);
  });

  test("a user's token reaches nothing of the administration: 403", async () => {
    const { userName, password } = await newUser();
    const { data } = await login(userName, password);
    const bearer = typed.clientAs({ bearerToken: data?.accessToken ?? '' });
    const users = await bearer.GET('/api/v1/users', {});
    expect(users.response.status).toBe(403);
    const admins = await bearer.GET('/api/v1/administrators', {});
    expect(admins.response.status).toBe(403);
  });

  test('unknown account, wrong password, unapproved and locked users: the same 401', async () => {
    const { userName, password, user } = await newUser();
    const unapproved = await newUser({ checked: 'false' });
    const locked = await newUser({ locked: 'true' });
    const answers = [
      await login('no-such-account', password),
      await login(userName, 'wrong-password1'),
      await login(unapproved.userName, unapproved.password),
      await login(locked.userName, locked.password),
    ];
    for (const { response, error } of answers) {
      expect(response.status).toBe(401);
      expect(error).toMatchObject(LOGIN_FAILED);
    }
    const row = await app.db.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.countOfFailedLogin).toBe(1);
  });

  test(`${LOCKOUT_FAILURES} failures lock the account for this address, even for the right password; a success after it resets`, async () => {
    const { userName, password, user } = await newUser();
    for (let i = 0; i < LOCKOUT_FAILURES; i += 1) {
      expect((await login(userName, `Wrong${i}pass`)).response.status).toBe(401);
    }
    const locked = await login(userName, password);
    expect(locked.response.status).toBe(401);
    expect(locked.error).toMatchObject(LOGIN_FAILED);
    const row = await app.db.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.countOfFailedLogin).toBe(LOCKOUT_FAILURES);
    // The lock is this address's (test/security/loginLimits.test.ts signs in from another), not the account's.
    expect(row.lockedUntil).toBeNull();
    const listed = await app.request.get('/api/v1/users').set('X-SS-API-KEY', key).query({ perPage: 1000 });
    expect(listed.body.users.find((u: { id: number }) => u.id === user.id)).toMatchObject({ locked: false });

    // The lockout ends (as if 15 minutes had passed): the right password works and resets the count.
    await app.state.reset(attemptKeys({ kind: 'users', account: userName, address: '127.0.0.1' }).lock);
    const { data, response } = await login(userName, password);
    expect(response.status).toBe(200);
    expect(data?.user).toMatchObject({ countOfFailedLogin: 0, locked: false, countOfLogin: 1 });
  });

  test('with an openId alone, from a back end presenting a key with Users; anonymously it is the login 401', async () => {
    const { user } = await newUser({ openId: 'wechat-open-id-1' });
    const { data, response } = await typed.client.POST('/api/v1/users/actions/login', {
      body: { openId: 'wechat-open-id-1' },
    });
    expect(response.status).toBe(200);
    expect(data?.user.id).toBe(user.id);
    const anonymous = await typed
      .clientAs({})
      .POST('/api/v1/users/actions/login', { body: { openId: 'wechat-open-id-1' } });
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.error).toMatchObject(LOGIN_FAILED);
    const unknown = await typed.client.POST('/api/v1/users/actions/login', {
      body: { openId: 'wechat-unknown' },
    });
    expect(unknown.response.status).toBe(401);
    expect(unknown.error).toMatchObject(LOGIN_FAILED);
  });

  test('a body that is neither form is a 400', async () => {
    const response = await app.request
      .post('/api/v1/users/actions/login')
      .send({ account: 'lisa', password: 'not-an-md5' });
    expect(response.status).toBe(400);
  });

  test('successful logins are never limited: 15 in a row for one account are all 200', async () => {
    const { userName, password } = await newUser();
    const statuses: number[] = [];
    for (let i = 0; i < 15; i += 1) statuses.push((await login(userName, password)).response.status);
    expect(statuses).toEqual(Array(15).fill(200));
  });

  test('more than 10 failures a minute from one address are a 429, whatever the accounts; password changes too', async () => {
    const { userName, password } = await newUser();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) statuses.push((await login(`someone${i}`, 'Whatever1')).response.status);
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    // Over the ceiling, the address is refused before any password is checked, even a right one.
    const limited = await login(userName, password);
    expect(limited.response.status).toBe(429);
    expect(Number(limited.response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.error?.type).toBe(`${PROBLEM_TYPE_BASE}rate-limited`);
    const change = await typed.client.POST('/api/v1/users/actions/resetPassword', {
      body: { account: userName, password: md5Hex(password), newPassword: 'Summer2024' },
    });
    expect(change.response.status).toBe(429);
  });
});

describe('POST /api/v1/users/actions/resetPassword', () => {
  const reset = (account: string, password: string, newPassword: string) =>
    typed.client.POST('/api/v1/users/actions/resetPassword', {
      body: { account, password: md5Hex(password), newPassword },
    });

  test('changes the password and ends the tokens issued before', async () => {
    const { userName, password, user } = await newUser();
    const before = await login(userName, password);
    const token = before.data?.accessToken ?? '';
    const { data, response } = await reset(user.email, password, 'Summer2024');
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: user.id, userName, password: '' });
    expect((await login(userName, password)).response.status).toBe(401);
    expect((await login(userName, 'Summer2024')).response.status).toBe(200);
    const stale = await typed.clientAs({ bearerToken: token }).GET('/api/v1/stl/sites', {});
    expect(stale.response.status).toBe(401);
  });

  test('a wrong current password is the login 401 and counts as a failure; unknown account too', async () => {
    const { userName, user } = await newUser();
    const wrong = await reset(userName, 'NotIt123', 'Summer2024');
    expect(wrong.response.status).toBe(401);
    expect(wrong.error).toMatchObject(LOGIN_FAILED);
    expect((await app.db.user.findUniqueOrThrow({ where: { id: user.id } })).countOfFailedLogin).toBe(1);
    const unknown = await reset('nobody-here', 'NotIt123', 'Summer2024');
    expect(unknown.error).toMatchObject(LOGIN_FAILED);
  });

  test('a new password against the rule is a 400 and changes nothing', async () => {
    const { userName, password, user } = await newUser();
    const before = await app.db.user.findUniqueOrThrow({ where: { id: user.id } });
    const { error, response } = await reset(userName, password, 'short');
    expect(response.status).toBe(400);
    expect(error?.errors?.[0]?.path).toBe('/body/newPassword');
    const after = await app.db.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(after.passwordHash).toBe(before.passwordHash);
  });
});

describe('POST /api/v1/users/actions/logout', () => {
  test('ends the token presented; it is a 401 from then on', async () => {
    const { userName, password } = await newUser();
    const { data } = await login(userName, password);
    const bearer = typed.clientAs({ bearerToken: data?.accessToken ?? '' });
    // A member's token does not reach the template tags: 403 while it is good, 401 once it is not.
    expect((await bearer.GET('/api/v1/stl/sites', {})).response.status).toBe(403);
    const out = await bearer.POST('/api/v1/users/actions/logout', {});
    expect(out.response.status).toBe(200);
    expect(out.data).toEqual({ value: true });
    expect((await bearer.GET('/api/v1/stl/sites', {})).response.status).toBe(401);
    expect((await bearer.POST('/api/v1/users/actions/logout', {})).response.status).toBe(401);
  });

  test('an API key is a 403; no credentials a 401', async () => {
    expect((await typed.client.POST('/api/v1/users/actions/logout', {})).response.status).toBe(403);
    expect((await typed.clientAs({}).POST('/api/v1/users/actions/logout', {})).response.status).toBe(401);
  });
});
