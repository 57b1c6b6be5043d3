import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { md5Hex } from '../../src/domain/accounts/passwords.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

/* Get one, update and delete users: lookups, the rules of creation, who may hand access over. */

let app: TestApp;
let typed: TypedClient;
/** Users plus what a user's token reads: may set a password or unlock (docs/security/credentials.md). */
let granting: TypedClient['client'];
/** The Users scope alone. */
let usersOnly: TypedClient['client'];

beforeAll(async () => {
  app = await startTestApp();
  typed = await startClient(app, await app.createApiKey(['Users', 'Contents', 'Channels']));
  granting = typed.client;
  usersOnly = typed.clientAs({ apiKey: await app.createApiKey(['Users']) });
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

let serial = 0;
async function newUser() {
  serial += 1;
  const password = `Pass${serial}word`;
  const { data } = await granting.POST('/api/v1/users', {
    body: {
      userName: `person${serial}`,
      password,
      email: `person${serial}@example.com`,
      mobile: `+3360000${String(serial).padStart(4, '0')}`,
      openId: `open-${serial}`,
    },
  });
  if (data === undefined) throw new Error('user not created');
  return { user: data, password };
}

const login = (account: string, password: string) =>
  typed.clientAs({}).POST('/api/v1/users/actions/login', { body: { account, password: md5Hex(password) } });

const get = (
  client: TypedClient['client'],
  account: string,
  by?: 'id' | 'userName' | 'email' | 'mobile' | 'openId',
) =>
  client.GET('/api/v1/users/{account}', {
    params: { path: { account }, query: by === undefined ? {} : { by } },
  });

const update = (client: TypedClient['client'], id: number, body: Record<string, unknown>) =>
  client.POST('/api/v1/users/{id}/actions/update', { params: { path: { id } }, body });

describe('GET /api/v1/users/{account}', () => {
  test('by id, user name, e-mail, mobile and openId: the same user; 404 otherwise', async () => {
    const { user } = await newUser();
    expect((await get(usersOnly, String(user.id))).data).toEqual(user);
    expect((await get(usersOnly, user.userName)).data).toEqual(user);
    expect((await get(usersOnly, user.email, 'email')).data).toEqual(user);
    expect((await get(usersOnly, user.mobile, 'mobile')).data).toEqual(user);
    expect((await get(usersOnly, user.openId, 'openId')).data).toEqual(user);
    for (const [account, by] of [
      ['999999', undefined],
      ['99999999999', undefined],
      [user.userName, 'email'],
      ['abc', 'id'],
      ['nobody', undefined],
    ] as const) {
      const missing = await get(usersOnly, account, by);
      expect(missing.response.status).toBe(404);
      expect(missing.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}not-found`, status: 404 });
    }
  });

  test('400 for an unknown by; 401 without credentials; 403 without the Users scope', async () => {
    const bad = await usersOnly.GET('/api/v1/users/{account}', {
      params: { path: { account: 'x' }, query: { by: 'password' as 'id' } },
    });
    expect(bad.response.status).toBe(400);
    expect((await get(typed.clientAs({}), '1')).response.status).toBe(401);
    expect(
      (await get(typed.clientAs({ apiKey: await app.createApiKey(['Contents']) }), '1')).response.status,
    ).toBe(403);
  });
});

describe('POST /api/v1/users/{id}/actions/update', () => {
  test('changes only what is given; a record read back can be sent back unchanged', async () => {
    const { user, password } = await newUser();
    const changed = await update(usersOnly, user.id, {
      displayName: 'New Name',
      avatarUrl: 'https://cdn.example.com/a.png',
      groupId: 2,
    });
    expect(changed.response.status).toBe(200);
    expect(changed.data).toEqual({
      ...user,
      displayName: 'New Name',
      avatarUrl: 'https://cdn.example.com/a.png',
    });
    const again = await update(usersOnly, user.id, { ...changed.data });
    expect(again.error).toBeUndefined();
    expect(again.data).toEqual(changed.data);
    // No password was set: the old one still logs in.
    expect((await login(user.userName, password)).response.status).toBe(200);
  });

  test('400 for each rule of creation (name, e-mail, avatar link, weak password, unknown field), 409 for clashes', async () => {
    const { user } = await newUser();
    const { user: other } = await newUser();
    const cases: [Record<string, unknown>, string, number][] = [
      [{ userName: 'a b' }, 'userName', 400],
      [{ email: 'not-an-address' }, 'email', 400],
      [{ avatarUrl: 'javascript:alert(1)' }, 'avatarUrl', 400],
      [{ avatarUrl: 'JaVa\tScript:alert(1)' }, 'avatarUrl', 400],
      [{ password: 'weak' }, 'password', 400],
      [{ userName: other.userName }, 'userName', 409],
      [{ email: other.email }, 'email', 409],
      [{ mobile: other.mobile }, 'mobile', 409],
      [{ openId: other.openId }, 'openId', 409],
      [{ favourite: 'x' }, 'favourite', 400],
    ];
    for (const [body, field, status] of cases) {
      const { response, error } = await update(granting, user.id, body);
      expect(response.status).toBe(status);
      expect(JSON.stringify(error)).toContain(field);
    }
    // Its own values are no clash.
    expect(
      (await update(usersOnly, user.id, { userName: user.userName, email: user.email })).response.status,
    ).toBe(200);
    const stored = (await get(usersOnly, String(user.id))).data;
    expect(stored).toEqual(user);
  });

  test("a new password needs a caller holding a user's reads (403 otherwise) and ends the user's tokens", async () => {
    const { user, password } = await newUser();
    const token = (await login(user.userName, password)).data?.accessToken ?? '';
    const asUser = typed.clientAs({ bearerToken: token });
    expect((await asUser.POST('/api/v1/users/actions/logout', {})).response.status).not.toBe(401);
    const token2 = (await login(user.userName, password)).data?.accessToken ?? '';
    const asUser2 = typed.clientAs({ bearerToken: token2 });
    const refused = await update(usersOnly, user.id, { password: 'Another1pass' });
    expect(refused.response.status).toBe(403);
    expect(refused.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}forbidden` });
    expect((await login(user.userName, 'Another1pass')).response.status).toBe(401);

    const set = await update(granting, user.id, { password: 'Another1pass' });
    expect(set.response.status).toBe(200);
    expect((await login(user.userName, 'Another1pass')).response.status).toBe(200);
    expect((await login(user.userName, password)).response.status).toBe(401);
    expect((await asUser2.POST('/api/v1/users/actions/logout', {})).response.status).toBe(401);
  });

  test('locking or withdrawing approval ends the tokens and refuses logins; unlocking lets in again', async () => {
    const { user, password } = await newUser();
    for (const body of [{ locked: 'true' }, { checked: 'false' }]) {
      const token = (await login(user.userName, password)).data?.accessToken ?? '';
      const changed = await update(usersOnly, user.id, body);
      expect(changed.response.status).toBe(200);
      expect(changed.data).toMatchObject(body.locked ? { locked: true } : { checked: false });
      expect(
        (await typed.clientAs({ bearerToken: token }).POST('/api/v1/users/actions/logout', {})).response
          .status,
      ).toBe(401);
      expect((await login(user.userName, password)).response.status).toBe(401);
      // Unlocking hands the account back: the Users scope alone may not (a 403).
      if (body.locked)
        expect((await update(usersOnly, user.id, { locked: 'false' })).response.status).toBe(403);
      await update(granting, user.id, { locked: 'false', checked: 'true' });
      expect((await login(user.userName, password)).response.status).toBe(200);
    }
  });

  test('404 for an unknown user; 400 for a bad id; 401 without credentials', async () => {
    const missing = await update(usersOnly, 999_999, { displayName: 'x' });
    expect(missing.response.status).toBe(404);
    expect((await update(usersOnly, 0, { displayName: 'x' })).response.status).toBe(400);
    expect((await update(typed.clientAs({}), 1, { displayName: 'x' })).response.status).toBe(401);
  });
});

describe('POST /api/v1/users/{id}/actions/delete', () => {
  test('answers the user as it was, ends its tokens; then 404', async () => {
    const { user, password } = await newUser();
    const token = (await login(user.userName, password)).data?.accessToken ?? '';
    const asUser = typed.clientAs({ bearerToken: token });
    // The token is good (and cached) before the deletion.
    expect(
      (await asUser.GET('/api/v1/users/{id}/avatar', { params: { path: { id: user.id } } })).response.status,
    ).toBe(200);
    const remove = () =>
      usersOnly.POST('/api/v1/users/{id}/actions/delete', { params: { path: { id: user.id } } });
    const deleted = await remove();
    expect(deleted.response.status).toBe(200);
    expect(deleted.data).toMatchObject({
      id: user.id,
      userName: user.userName,
      email: user.email,
      countOfLogin: 1,
    });
    expect(await app.db.user.findUnique({ where: { id: user.id } })).toBeNull();
    expect((await asUser.POST('/api/v1/users/actions/logout', {})).response.status).toBe(401);
    expect((await remove()).response.status).toBe(404);
    expect((await login(user.userName, password)).response.status).toBe(401);
  });

  test('401 without credentials, 403 without the Users scope, 400 for a bad id', async () => {
    const { user } = await newUser();
    const path = { params: { path: { id: user.id } } };
    expect((await typed.clientAs({}).POST('/api/v1/users/{id}/actions/delete', path)).response.status).toBe(
      401,
    );
    const admins = typed.clientAs({ apiKey: await app.createApiKey(['Administrators']) });
    expect((await admins.POST('/api/v1/users/{id}/actions/delete', path)).response.status).toBe(403);
    expect(
      (await usersOnly.POST('/api/v1/users/{id}/actions/delete', { params: { path: { id: 0 } } })).response
        .status,
    ).toBe(400);
    expect(await app.db.user.findUnique({ where: { id: user.id } })).not.toBeNull();
  });
});
