import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { signAccessToken } from '../../src/domain/crypto/tokens.ts';
import { SCOPES, type Scope } from '../../src/domain/principal.ts';
import { WWW_AUTHENTICATE } from '../../src/http/auth.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/*
 * Security through HTTP, on the real listContents operation (scope Contents): with valid
 * credentials it answers 200 with the (empty) contents of an existing site.
 */

let app: TestApp;
let siteId: number;
let userId: number;
let administratorId: number;

beforeAll(async () => {
  app = await startTestApp();
  siteId = (await app.db.site.create({ data: { siteDir: 'main', siteName: 'Main site' } })).id;
  userId = (await app.db.user.create({ data: account('member') })).id;
  administratorId = (await app.db.administrator.create({ data: account('operator') })).id;
});
afterAll(() => app.close());

const list = () => app.request.post('/api/v1/contents').send({ siteId });

function expectOk(response: { status: number; body: unknown }) {
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({ contents: [], totalCount: 0 });
}

function expectUnauthorized(
  response: { status: number; body: unknown; headers: Record<string, string> },
  detail: string,
) {
  expect(response.status).toBe(401);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.headers['www-authenticate']).toBe(WWW_AUTHENTICATE);
  expect(response.body).toEqual({
    type: `${PROBLEM_TYPE_BASE}unauthorized`,
    title: 'Unauthorized',
    status: 401,
    detail,
    message: detail,
  });
}

/** An account row with placeholder password material (these tests never log in). */
const account = (userName: string) => ({ userName, passwordHash: 'x', passwordSalt: 'x' });

/** A token for an existing account, at the account's current token version. */
async function token(
  claims: { id: number; kind: 'user' | 'administrator'; scopes: Scope[] },
  expiresIn = 600,
) {
  const row =
    claims.kind === 'user'
      ? await app.db.user.findUniqueOrThrow({ where: { id: claims.id } })
      : await app.db.administrator.findUniqueOrThrow({ where: { id: claims.id } });
  return signAccessToken({ ...claims, version: row.tokenVersion }, app.config.cmsSecret, { expiresIn }).token;
}

describe('API keys', () => {
  test('no credentials on a secured operation is a 401 with WWW-Authenticate', async () => {
    expectUnauthorized(
      await list(),
      'This operation needs an API key (X-SS-API-KEY header or apiKey query parameter) or a bearer access token',
    );
  });

  test('a key in the X-SS-API-KEY header is accepted', async () => {
    const key = await app.createApiKey(['Contents']);
    expectOk(await list().set('X-SS-API-KEY', key));
  });

  test('a key in the apiKey query parameter is accepted, and is not an unknown parameter', async () => {
    const key = await app.createApiKey(['Contents']);
    expectOk(await app.request.post('/api/v1/contents').query({ apiKey: key }).send({ siteId }));
  });

  test('the bootstrap key (all scopes) is accepted', async () => {
    expectOk(await list().set('X-SS-API-KEY', await app.createApiKey('all')));
  });

  test('an unknown key is a 401', async () => {
    expectUnauthorized(
      await list().set('X-SS-API-KEY', 'cms_not-a-key-anybody-issued'),
      'The API key is not valid',
    );
  });

  test('an unknown key in the query is a 401 with its own reason', async () => {
    const response = await app.request
      .post('/api/v1/contents')
      .query({ apiKey: 'cms_unknown' })
      .send({ siteId });
    expectUnauthorized(response, 'The API key is not valid');
  });

  test('a revoked key is a 401', async () => {
    const key = await app.createApiKey(['Contents'], { revoked: true });
    expectUnauthorized(await list().set('X-SS-API-KEY', key), 'The API key has been revoked');
  });

  test('an expired key is a 401; one that expires later is accepted', async () => {
    const expired = await app.createApiKey(['Contents'], { expiresAt: new Date(Date.now() - 1000) });
    expectUnauthorized(await list().set('X-SS-API-KEY', expired), 'The API key has expired');
    const later = await app.createApiKey(['Contents'], { expiresAt: new Date(Date.now() + 3_600_000) });
    expectOk(await list().set('X-SS-API-KEY', later));
  });

  test('a key without the operation scope is a 403 naming the scope', async () => {
    const key = await app.createApiKey(['Channels', 'STL']);
    for (const response of [
      await list().set('X-SS-API-KEY', key),
      await app.request.post('/api/v1/contents').query({ apiKey: key }).send({ siteId }),
    ]) {
      expect(response.status).toBe(403);
      expect(response.headers['www-authenticate']).toBeUndefined();
      expect(response.body).toMatchObject({
        type: `${PROBLEM_TYPE_BASE}forbidden`,
        title: 'Forbidden',
        status: 403,
        detail: "The credentials do not carry the 'Contents' scope this operation needs",
      });
    }
  });

  test('credentials are checked before the body: a bad body without a key is a 401', async () => {
    const response = await app.request.post('/api/v1/contents').send({ siteId: 'one' });
    expect(response.status).toBe(401);
  });

  test('lastUsedAt is recorded on use, and not rewritten within a minute', async () => {
    const key = await app.createApiKey(['Contents']);
    const row = () =>
      app.db.apiKey.findFirstOrThrow({ where: { title: 'test key' }, orderBy: { id: 'desc' } });
    expect((await row()).lastUsedAt).toBeNull();
    const before = Date.now();
    expectOk(await list().set('X-SS-API-KEY', key));
    await waitFor(async () => (await row()).lastUsedAt !== null);
    const first = (await row()).lastUsedAt!;
    expect(first.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expectOk(await list().set('X-SS-API-KEY', key));
    expectOk(await list().set('X-SS-API-KEY', key));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await row()).lastUsedAt).toEqual(first);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('bearer access tokens', () => {
  test("a user's token reads contents (a member's read)", async () => {
    const response = await list().set(
      'Authorization',
      `Bearer ${await token({ id: userId, kind: 'user', scopes: ['Contents'] })}`,
    );
    expectOk(response);
  });

  test("an administrator's token carries every scope", async () => {
    const response = await list().set(
      'Authorization',
      `Bearer ${await token({ id: administratorId, kind: 'administrator', scopes: [] })}`,
    );
    expectOk(response);
  });

  test("a user's token beyond a member's reads is a 403 naming the scope (not a 401 about a missing key)", async () => {
    // Even claiming STL: the operator grants users no scope by default (USER_TOKEN_SCOPES).
    const response = await app.request
      .get('/api/v1/stl/sites')
      .set('Authorization', `Bearer ${await token({ id: userId, kind: 'user', scopes: ['STL'] })}`);
    expect(response.status).toBe(403);
    expect(response.body.detail).toBe(
      "A user's access token cannot reach this operation: it needs 'STL', which a site member's token does not carry",
    );
  });

  test("a user's token never reaches the administration, whatever scopes it claims: 403", async () => {
    const claimsAll = await token({ id: userId, kind: 'user', scopes: [...SCOPES] });
    for (const path of ['/api/v1/users', '/api/v1/administrators']) {
      const response = await app.request.get(path).set('Authorization', `Bearer ${claimsAll}`);
      expect(response.status).toBe(403);
      expect(response.body.type).toBe(`${PROBLEM_TYPE_BASE}forbidden`);
      expect(response.body.detail).toMatch(/^A user's access token cannot reach this operation: it needs '/);
    }
    // The same scopes on an administrator's token get through authorization (then: not implemented).
    const administrator = await token({ id: administratorId, kind: 'administrator', scopes: [] });
    const response = await app.request.get('/api/v1/users').set('Authorization', `Bearer ${administrator}`);
    expect(response.status).not.toBe(403);
    expect(response.status).not.toBe(401);
  });

  test('a token stops working at once when its account is locked, and works again when unlocked', async () => {
    const user = await app.db.user.create({ data: account('locked-later') });
    const bearer = `Bearer ${await token({ id: user.id, kind: 'user', scopes: ['Contents'] })}`;
    expectOk(await list().set('Authorization', bearer));
    await app.db.user.update({ where: { id: user.id }, data: { locked: true } });
    expectUnauthorized(
      await list().set('Authorization', bearer),
      'The account of this access token is locked',
    );
    await app.db.user.update({
      where: { id: user.id },
      data: { locked: false, lockedUntil: new Date(Date.now() + 60_000) },
    });
    expectUnauthorized(
      await list().set('Authorization', bearer),
      'The account of this access token is locked',
    );
    await app.db.user.update({ where: { id: user.id }, data: { lockedUntil: new Date(Date.now() - 1000) } });
    expectOk(await list().set('Authorization', bearer));
  });

  test("a locked-out administrator's token is a 401", async () => {
    const administrator = await app.db.administrator.create({ data: account('admin-locked') });
    const bearer = `Bearer ${await token({ id: administrator.id, kind: 'administrator', scopes: [] })}`;
    expectOk(await list().set('Authorization', bearer));
    await app.db.administrator.update({ where: { id: administrator.id }, data: { isLockedOut: true } });
    expectUnauthorized(
      await list().set('Authorization', bearer),
      'The account of this access token is locked',
    );
  });

  test('a token of a deleted account is a 401', async () => {
    const user = await app.db.user.create({ data: account('deleted-later') });
    const bearer = `Bearer ${await token({ id: user.id, kind: 'user', scopes: ['Contents'] })}`;
    await app.db.user.delete({ where: { id: user.id } });
    expectUnauthorized(
      await list().set('Authorization', bearer),
      'The account of this access token no longer exists',
    );
  });

  test('advancing the token version (logout, password change) revokes every older token at once', async () => {
    const user = await app.db.user.create({ data: account('logs-out') });
    const old = `Bearer ${await token({ id: user.id, kind: 'user', scopes: ['Contents'] })}`;
    await app.db.user.update({ where: { id: user.id }, data: { tokenVersion: { increment: 1 } } });
    expectUnauthorized(
      await list().set('Authorization', old),
      'The access token has been revoked (logout, password change or lock)',
    );
    const fresh = `Bearer ${await token({ id: user.id, kind: 'user', scopes: ['Contents'] })}`;
    expectOk(await list().set('Authorization', fresh));
  });

  test('an expired token is a 401', async () => {
    const expired = signAccessToken(
      { id: userId, kind: 'user', scopes: ['Contents'], version: 0 },
      app.config.cmsSecret,
      { expiresIn: 60, now: new Date(Date.now() - 3_600_000) },
    ).token;
    expectUnauthorized(
      await list().set('Authorization', `Bearer ${expired}`),
      'The access token has expired',
    );
  });

  test('a tampered token is a 401', async () => {
    const genuine = await token({ id: userId, kind: 'user', scopes: ['Channels'] });
    const [header, payload, signature] = genuine.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const escalated = Buffer.from(JSON.stringify({ ...claims, kind: 'administrator' })).toString('base64url');
    expectUnauthorized(
      await list().set('Authorization', `Bearer ${header}.${escalated}.${signature}`),
      'The access token signature is invalid',
    );
  });

  test('a token signed with another secret is a 401', async () => {
    const foreign = signAccessToken(
      { id: userId, kind: 'user', scopes: ['Contents'], version: 0 },
      'x'.repeat(40),
      { expiresIn: 600 },
    );
    expectUnauthorized(
      await list().set('Authorization', `Bearer ${foreign.token}`),
      'The access token signature is invalid',
    );
  });

  test('an API key sent as a bearer token is a 401 that says where keys go', async () => {
    const key = await app.createApiKey('all');
    const response = await list().set('Authorization', `Bearer ${key}`);
    expectUnauthorized(
      response,
      'This is an API key, not an access token: send it in the X-SS-API-KEY header (or the apiKey query parameter)',
    );
    expect(JSON.stringify(response.body)).not.toContain(key);
  });

  test('garbage in the Authorization header is a 401', async () => {
    expectUnauthorized(
      await list().set('Authorization', 'Bearer not-a-jwt'),
      'The access token is malformed',
    );
  });
});
