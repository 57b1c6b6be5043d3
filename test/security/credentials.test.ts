import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { hashPlainPassword, md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import { formatDateTime } from '../../src/domain/dates.ts';
import { DEFAULT_ACCOUNT_POLICY } from '../../src/domain/logins/policy.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * No credential may lead to a credential with more power than itself (docs/security/credentials.md):
 * the Administrators scope is no way to an administrator's token, the Users scope no way to content
 * writes, an openId no password, and the ApiKeys scope no way to looser keys. Over HTTP, on the
 * database the run selects (SQLite or PostgreSQL).
 */

let app: TestApp;
let all: string;
let typed: TypedClient;

beforeAll(async () => {
  ({ app, key: all } = await startFixtureApp('all'));
  typed = await startClient(app, all);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

const FORBIDDEN = `${PROBLEM_TYPE_BASE}forbidden`;

let serial = 0;
/** A name and a password (with its stored hash) for a new account. */
async function credentialsOf(prefix: string) {
  serial += 1;
  const password = `${prefix}${serial}-pass`;
  return {
    userName: `${prefix.toLowerCase()}${serial}`,
    password,
    stored: await hashPlainPassword(password),
  };
}

async function newAdministrator(fields: { isLockedOut?: boolean } = {}) {
  const { userName, password, stored } = await credentialsOf('Chief');
  return { row: await app.db.administrator.create({ data: { userName, ...stored, ...fields } }), password };
}

async function newUser(fields: { openId?: string } = {}) {
  const { userName, password, stored } = await credentialsOf('Member');
  return { row: await app.db.user.create({ data: { userName, ...stored, ...fields } }), password };
}

const adminLogin = (account: string, password: string) =>
  app.request.post('/api/v1/administrators/actions/login').send({ account, password: md5Hex(password) });
const userLogin = (account: string, password: string) =>
  app.request.post('/api/v1/users/actions/login').send({ account, password: md5Hex(password) });

describe('Administrators scope: no way to an administrator token', () => {
  let administratorsOnly: string;
  beforeAll(async () => {
    administratorsOnly = await app.createApiKey(['Administrators']);
  });
  const update = (id: number, body: object, key: string) =>
    app.request.post(`/api/v1/administrators/${id}/actions/update`).set('X-SS-API-KEY', key).send(body);

  test("a key with Administrators alone cannot set an administrator's password: 403, nothing changes", async () => {
    const { row, password } = await newAdministrator();
    const token = (await adminLogin(row.userName, password)).body.accessToken as string;
    const refused = await update(
      row.id,
      { password: 'Taken-Over-1', displayName: 'Renamed' },
      administratorsOnly,
    );
    expect(refused.status).toBe(403);
    expect(refused.body.type).toBe(FORBIDDEN);
    expect(refused.body.detail).toMatch(/^Setting an administrator's password would hand over/);
    const stored = await app.db.administrator.findUniqueOrThrow({ where: { id: row.id } });
    expect(await verifyMd5Password(md5Hex(password), stored)).toBe(true);
    expect(stored.displayName).toBe(row.displayName);
    expect((await adminLogin(row.userName, 'Taken-Over-1')).status).toBe(401);
    // The administrator's own token still works: the refusal ended nothing.
    expect(
      (await app.request.get('/api/v1/administrators').set('Authorization', `Bearer ${token}`)).status,
    ).toBe(200);
  });

  test('nor unlock one: 403; locking (less power) is allowed', async () => {
    const { row, password } = await newAdministrator({ isLockedOut: true });
    const refused = await update(row.id, { isLockedOut: 'false' }, administratorsOnly);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/^Unlocking an administrator would hand over/);
    expect((await app.db.administrator.findUniqueOrThrow({ where: { id: row.id } })).isLockedOut).toBe(true);
    expect((await adminLogin(row.userName, password)).status).toBe(401);
    const other = await newAdministrator();
    const locked = await update(other.row.id, { isLockedOut: 'true' }, administratorsOnly);
    expect(locked.status).toBe(200);
    expect(locked.body.value.isLockedOut).toBe(true);
  });

  test("a key with every scope, or an administrator's own token, may set a password and unlock", async () => {
    const { row } = await newAdministrator({ isLockedOut: true });
    const byKey = await update(row.id, { isLockedOut: 'false', password: 'Fresh-Start-7' }, all);
    expect(byKey.status).toBe(200);
    const login = await adminLogin(row.userName, 'Fresh-Start-7');
    expect(login.status).toBe(200);
    const other = await newAdministrator({ isLockedOut: true });
    const byToken = await app.request
      .post(`/api/v1/administrators/${other.row.id}/actions/update`)
      .set('Authorization', `Bearer ${login.body.accessToken}`)
      .send({ isLockedOut: 'false' });
    expect(byToken.status).toBe(200);
    expect((await adminLogin(other.row.userName, other.password)).status).toBe(200);
  });
});

describe('Users scope: a user is a site member, not an editor', () => {
  test('creating a user (it comes with a password) needs what its token carries: Users alone is a 403', async () => {
    const usersOnly = await app.createApiKey(['Users']);
    const refused = await app.request
      .post('/api/v1/users')
      .set('X-SS-API-KEY', usersOnly)
      .send({ userName: 'sneaky', password: 'Sneaky-123' });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(
      /^Creating a user with a password would hand over .*'Contents', 'Channels'/,
    );
    expect(await app.db.user.findUnique({ where: { userName: 'sneaky' } })).toBeNull();
    const enough = await app.createApiKey(['Users', 'Contents', 'Channels']);
    const created = await app.request
      .post('/api/v1/users')
      .set('X-SS-API-KEY', enough)
      .send({ userName: 'welcome', password: 'Welcome-123' });
    expect(created.status).toBe(200);
  });

  test("a user's token reads approved contents and channels only, and writes nothing", async () => {
    const { row, password } = await newUser();
    const login = await userLogin(row.userName, password);
    expect(login.status).toBe(200);
    const bearer = `Bearer ${login.body.accessToken}`;
    const approved = await app.db.content.findMany({
      where: { siteId: 1, checked: true, recycled: false },
      select: { id: true },
    });
    const pending = await app.db.content.findFirstOrThrow({
      where: { siteId: 1, checked: false, recycled: false },
    });
    expect(approved.length).toBeGreaterThan(0);

    // Asking for unapproved contents still lists approved ones only.
    for (const filter of [{}, { checked: false }]) {
      const listed = await app.request
        .post('/api/v1/contents')
        .set('Authorization', bearer)
        .send({ siteId: 1, perPage: 100, ...filter });
      expect(listed.status).toBe(200);
      const ids = (listed.body.contents as { id: number }[])
        .map((content) => content.id)
        .sort((a, b) => a - b);
      expect(ids).toEqual(approved.map((content) => content.id).sort((a, b) => a - b));
    }
    const hidden = await app.request
      .get(`/api/v1/contents/1/${pending.channelId}/${pending.id}`)
      .set('Authorization', bearer);
    expect(hidden.status).toBe(404);
    const first = approved[0]?.id ?? 0;
    const shown = await app.db.content.findUniqueOrThrow({ where: { id: first } });
    expect(
      (await app.request.get(`/api/v1/contents/1/${shown.channelId}/${first}`).set('Authorization', bearer))
        .status,
    ).toBe(200);
    expect((await app.request.get('/api/v1/channels/1/2').set('Authorization', bearer)).status).toBe(200);

    const writes = [
      app.request
        .post(`/api/v1/contents/1/${shown.channelId}/${first}/actions/update`)
        .send({ title: 'Defaced' }),
      app.request.post(`/api/v1/contents/1/${shown.channelId}/${first}/actions/delete`),
      app.request.post('/api/v1/channels/1/2/actions/update').send({ channelName: 'Defaced' }),
      app.request.get('/api/v1/stl/sqlContents').query({ siteId: 1, queryString: 'SELECT id FROM contents' }),
      app.request.get('/api/v1/stl/sites'),
      app.request.get('/api/v1/users'),
    ];
    for (const request of writes) {
      const response = await request.set('Authorization', bearer);
      expect(response.status).toBe(403);
      expect(response.body.detail).toMatch(/^A user's access token cannot reach this operation/);
    }
    expect((await app.db.content.findUniqueOrThrow({ where: { id: first } })).title).toBe(shown.title);
  });

  test('a token issued with more scopes than the operator grants now carries only what is granted', async () => {
    // Issued while USER_TOKEN_SCOPES granted Contents (a second node with that setting), used here.
    const { startSecondApp } = await import('../support/app.ts');
    const editorNode = await startSecondApp(app, {
      config: { accounts: { ...DEFAULT_ACCOUNT_POLICY, userTokenScopes: ['Contents'] } },
    });
    try {
      const { row, password } = await newUser();
      const login = await editorNode.request
        .post('/api/v1/users/actions/login')
        .send({ account: row.userName, password: md5Hex(password) });
      const bearer = `Bearer ${login.body.accessToken}`;
      const content = await app.db.content.findFirstOrThrow({ where: { siteId: 1, recycled: false } });
      const path = `/api/v1/contents/1/${content.channelId}/${content.id}/actions/update`;
      const granted = await editorNode.request
        .post(path)
        .set('Authorization', bearer)
        .send({ title: 'Edited' });
      expect(granted.status).toBe(200);
      const refused = await app.request
        .post(path)
        .set('Authorization', bearer)
        .send({ title: 'Edited again' });
      expect(refused.status).toBe(403);
      expect((await app.db.content.findUniqueOrThrow({ where: { id: content.id } })).title).toBe('Edited');
    } finally {
      await editorNode.close();
    }
  });

  test('openId login: only from a caller presenting a key with Users, else the login 401', async () => {
    const { row } = await newUser({ openId: 'wx-trusted-1' });
    const login = (key?: string) => {
      const request = app.request.post('/api/v1/users/actions/login');
      return (key === undefined ? request : request.set('X-SS-API-KEY', key)).send({
        openId: 'wx-trusted-1',
      });
    };
    const anonymous = await login();
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.type).toBe(`${PROBLEM_TYPE_BASE}login-failed`);
    const contentsKey = await login(await app.createApiKey(['Contents']));
    expect(contentsKey.status).toBe(401);
    expect(contentsKey.body.type).toBe(`${PROBLEM_TYPE_BASE}login-failed`);
    const badKey = await login('not-a-key-at-all');
    expect(badKey.status).toBe(401);
    expect(badKey.body.type).toBe(`${PROBLEM_TYPE_BASE}unauthorized`);
    const trusted = await login(await app.createApiKey(['Users']));
    expect(trusted.status).toBe(200);
    expect(trusted.body.user.id).toBe(row.id);
  });

  test('openId login from anyone once the operator turns password-less login on', async () => {
    const { startSecondApp } = await import('../support/app.ts');
    const open = await startSecondApp(app, {
      config: { accounts: { ...DEFAULT_ACCOUNT_POLICY, passwordlessLogin: true } },
    });
    try {
      const { row } = await newUser({ openId: 'wx-open-2' });
      const login = await open.request.post('/api/v1/users/actions/login').send({ openId: 'wx-open-2' });
      expect(login.status).toBe(200);
      expect(login.body.user.id).toBe(row.id);
    } finally {
      await open.close();
    }
  });
});

describe('ApiKeys scope: no key looser than its maker', () => {
  const DAY = 24 * 60 * 60_000;
  let limited: string;
  let limitedId: number;
  let limitedExpiry: Date;

  beforeAll(async () => {
    limitedExpiry = new Date(Date.now() + DAY);
    const created = await app.request
      .post('/api/v1/apiKeys')
      .set('X-SS-API-KEY', all)
      .send({
        title: 'limited maker',
        scopes: ['ApiKeys', 'Contents'],
        expiresAt: formatDateTime(limitedExpiry),
        rateLimitPerMinute: 1000,
      });
    expect(created.status).toBe(201);
    limited = created.body.key;
    limitedId = created.body.apiKey.id;
    limitedExpiry = (await app.db.apiKey.findUniqueOrThrow({ where: { id: limitedId } })).expiresAt as Date;
  });

  const as = (key: string) => ({
    create: (body: object) => app.request.post('/api/v1/apiKeys').set('X-SS-API-KEY', key).send(body),
    update: (id: number, body: object) =>
      app.request.post(`/api/v1/apiKeys/${id}/actions/update`).set('X-SS-API-KEY', key).send(body),
    reset: (id: number) => app.request.post(`/api/v1/apiKeys/${id}/actions/reset`).set('X-SS-API-KEY', key),
  });

  test('a key cannot loosen its own limits: 403 and nothing changes; tightening is fine', async () => {
    const later = formatDateTime(new Date(limitedExpiry.getTime() + DAY));
    for (const body of [
      { rateLimitPerMinute: null },
      { rateLimitPerMinute: 5000 },
      { expiresAt: null },
      { expiresAt: later },
    ]) {
      const refused = await as(limited).update(limitedId, body);
      expect(refused.status).toBe(403);
      expect(refused.body.type).toBe(FORBIDDEN);
    }
    const row = await app.db.apiKey.findUniqueOrThrow({ where: { id: limitedId } });
    expect(row.rateLimitPerMinute).toBe(1000);
    expect(row.expiresAt?.getTime()).toBe(limitedExpiry.getTime());
    const tighter = await as(limited).update(limitedId, { rateLimitPerMinute: 900, title: 'limited maker' });
    expect(tighter.status).toBe(200);
    expect(tighter.body.rateLimitPerMinute).toBe(900);
  });

  test('a key it creates is never looser: limits left out are its own, looser ones a 403', async () => {
    const inherited = await as(limited).create({ title: 'child', scopes: ['Contents'] });
    expect(inherited.status).toBe(201);
    const maker = await app.db.apiKey.findUniqueOrThrow({ where: { id: limitedId } });
    expect(inherited.body.apiKey.rateLimitPerMinute).toBe(maker.rateLimitPerMinute);
    expect(inherited.body.apiKey.expiresAt).toBe(formatDateTime(limitedExpiry));
    const later = formatDateTime(new Date(limitedExpiry.getTime() + DAY));
    for (const body of [
      { rateLimitPerMinute: null },
      { rateLimitPerMinute: 100_000 },
      { expiresAt: null },
      { expiresAt: later },
    ]) {
      const refused = await as(limited).create({ title: 'looser child', scopes: ['Contents'], ...body });
      expect(refused.status).toBe(403);
    }
    expect(await app.db.apiKey.count({ where: { title: 'looser child' } })).toBe(0);
    // Nor may it loosen a key it made.
    const loosened = await as(limited).update(inherited.body.apiKey.id, { rateLimitPerMinute: null });
    expect(loosened.status).toBe(403);
  });

  test('a key resets only keys no looser than itself (a new secret of a looser key would be a looser key)', async () => {
    const unlimited = await as(all).create({ title: 'unlimited sibling', scopes: ['Contents'] });
    expect(unlimited.status).toBe(201);
    expect(unlimited.body.apiKey.rateLimitPerMinute).toBeNull();
    const refused = await as(limited).reset(unlimited.body.apiKey.id);
    expect(refused.status).toBe(403);
    expect(refused.body.key).toBeUndefined();
    const tight = await as(limited).create({
      title: 'tight child',
      scopes: ['Contents'],
      rateLimitPerMinute: 10,
    });
    expect(tight.status).toBe(201);
    const reset = await as(limited).reset(tight.body.apiKey.id);
    expect(reset.status).toBe(200);
    expect(typeof reset.body.key).toBe('string');
  });

  test('a caller without limits of its own (an administrator, an unlimited key) makes unlimited keys', async () => {
    const unlimited = await as(all).create({ title: 'free', scopes: ['Contents'], rateLimitPerMinute: null });
    expect(unlimited.status).toBe(201);
    expect(unlimited.body.apiKey).toMatchObject({ rateLimitPerMinute: null, expiresAt: null });
  });
});
