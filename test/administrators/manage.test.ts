import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { md5Hex } from '../../src/domain/accounts/passwords.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

/* Create, get one and delete administrators: who may, what is answered, what ends with a deletion. */

let app: TestApp;
let typed: TypedClient;
/** A key with every scope: what handing over (or taking away) an administrator needs. */
let full: TypedClient['client'];
/** A key with the Administrators scope only. */
let partial: TypedClient['client'];

beforeAll(async () => {
  app = await startTestApp();
  typed = await startClient(app, await app.createApiKey('all'));
  full = typed.client;
  partial = typed.clientAs({ apiKey: await app.createApiKey(['Administrators']) });
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

let serial = 0;
const create = (client: TypedClient['client'], fields: Record<string, unknown> = {}) => {
  serial += 1;
  return client.POST('/api/v1/administrators', {
    body: {
      userName: `boss${serial}`,
      password: `Boss${serial}pass`,
      email: `boss${serial}@example.com`,
      siteIdCollection: '1,2',
      ...fields,
    } as { userName: string; password: string },
  });
};

const login = (account: string, password: string) =>
  typed.clientAs({}).POST('/api/v1/administrators/actions/login', {
    body: { account, password: md5Hex(password) },
  });

describe('POST /api/v1/administrators', () => {
  test('creates an administrator who can log in; no password material; the creator is recorded', async () => {
    const { data, response } = await create(full, {
      displayName: 'Boss',
      mobile: '+3361111',
      creatorUserName: 'x',
    });
    expect(response.status).toBe(200);
    expect(data?.value).toMatchObject({
      userName: `boss${serial}`,
      displayName: 'Boss',
      email: `boss${serial}@example.com`,
      mobile: '+3361111',
      creatorUserName: 'x',
      password: '',
      passwordSalt: '',
      siteIdCollection: '1,2',
      isLockedOut: false,
      countOfLogin: 0,
    });
    const stored = await app.db.administrator.findUniqueOrThrow({ where: { id: data?.value.id ?? 0 } });
    expect(stored.passwordHash).not.toContain(`Boss${serial}pass`);
    const loggedIn = await login(`boss${serial}`, `Boss${serial}pass`);
    expect(loggedIn.response.status).toBe(200);

    // An administrator's token creates one: its own name is the creator, whatever the body says.
    const asAdmin = typed.clientAs({ bearerToken: loggedIn.data?.accessToken ?? '' });
    const second = await create(asAdmin, { creatorUserName: 'somebody-else' });
    expect(second.response.status).toBe(200);
    expect(second.data?.value.creatorUserName).toBe(`boss${serial - 1}`);
  });

  test('the Administrators scope alone is a 403 and creates nothing; none is a 401', async () => {
    const before = await app.db.administrator.count();
    const refused = await create(partial);
    expect(refused.response.status).toBe(403);
    expect(refused.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}forbidden`, status: 403 });
    expect((await create(typed.clientAs({}))).response.status).toBe(401);
    expect(
      (await create(typed.clientAs({ apiKey: await app.createApiKey(['Users']) }))).response.status,
    ).toBe(403);
    expect(await app.db.administrator.count()).toBe(before);
  });

  test('400 for a bad name, a weak password, a missing field, an unknown field; 409 for a used name or e-mail', async () => {
    const taken = await create(full);
    const name = taken.data?.value.userName ?? '';
    const cases: [Record<string, unknown>, string, number][] = [
      [{ userName: 'has space' }, 'userName', 400],
      [{ password: 'short' }, 'password', 400],
      [{ password: undefined }, 'password', 400],
      [{ nickname: 'x' }, 'nickname', 400],
      [{ siteIdCollection: '1;2' }, 'siteIdCollection', 400],
      [{ userName: name }, 'userName', 409],
      [{ email: taken.data?.value.email }, 'email', 409],
    ];
    for (const [fields, field, status] of cases) {
      const { response, error } = await create(full, fields);
      expect(response.status).toBe(status);
      expect(JSON.stringify(error)).toContain(field);
    }
  });
});

describe('GET /api/v1/administrators/{idOrName}', () => {
  test('by id or by name, the same administrator; 404 for neither', async () => {
    const made = (await create(full, { displayName: 'Lookup' })).data?.value;
    const byId = await partial.GET('/api/v1/administrators/{idOrName}', {
      params: { path: { idOrName: String(made?.id) } },
    });
    expect(byId.response.status).toBe(200);
    expect(byId.data?.value).toEqual(made);
    const byName = await partial.GET('/api/v1/administrators/{idOrName}', {
      params: { path: { idOrName: made?.userName ?? '' } },
    });
    expect(byName.data?.value).toEqual(made);
    for (const idOrName of ['999999', '99999999999', 'nobody-here']) {
      const missing = await partial.GET('/api/v1/administrators/{idOrName}', {
        params: { path: { idOrName } },
      });
      expect(missing.response.status).toBe(404);
      expect(missing.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}not-found`, status: 404 });
    }
  });

  test('401 without credentials, 403 without the Administrators scope', async () => {
    const path = { params: { path: { idOrName: '1' } } };
    expect((await typed.clientAs({}).GET('/api/v1/administrators/{idOrName}', path)).response.status).toBe(
      401,
    );
    const users = typed.clientAs({ apiKey: await app.createApiKey(['Users']) });
    expect((await users.GET('/api/v1/administrators/{idOrName}', path)).response.status).toBe(403);
  });
});

describe('POST /api/v1/administrators/{id}/actions/delete', () => {
  test('answers the administrator as it was and ends its tokens at once', async () => {
    const made = (await create(full)).data?.value;
    const token = (await login(made?.userName ?? '', `Boss${serial}pass`)).data?.accessToken ?? '';
    const asDeleted = typed.clientAs({ bearerToken: token });
    // The token works (and is now in the credential cache) before the deletion.
    expect((await asDeleted.GET('/api/v1/administrators', {})).response.status).toBe(200);
    const deleted = await full.POST('/api/v1/administrators/{id}/actions/delete', {
      params: { path: { id: made?.id ?? 0 } },
    });
    expect(deleted.response.status).toBe(200);
    expect(deleted.data?.value).toMatchObject({ id: made?.id, userName: made?.userName, countOfLogin: 1 });
    expect(await app.db.administrator.findUnique({ where: { id: made?.id ?? 0 } })).toBeNull();
    expect((await asDeleted.GET('/api/v1/administrators', {})).response.status).toBe(401);
    const again = await full.POST('/api/v1/administrators/{id}/actions/delete', {
      params: { path: { id: made?.id ?? 0 } },
    });
    expect(again.response.status).toBe(404);
  });

  test('403 with the Administrators scope alone; 400 for itself or a bad id; 401 without credentials', async () => {
    const made = (await create(full)).data?.value;
    const path = { params: { path: { id: made?.id ?? 0 } } };
    expect((await partial.POST('/api/v1/administrators/{id}/actions/delete', path)).response.status).toBe(
      403,
    );
    expect(
      (await typed.clientAs({}).POST('/api/v1/administrators/{id}/actions/delete', path)).response.status,
    ).toBe(401);
    const token = (await login(made?.userName ?? '', `Boss${serial}pass`)).data?.accessToken ?? '';
    const self = await typed
      .clientAs({ bearerToken: token })
      .POST('/api/v1/administrators/{id}/actions/delete', path);
    expect(self.response.status).toBe(400);
    expect(await app.db.administrator.findUnique({ where: { id: made?.id ?? 0 } })).not.toBeNull();
    const bad = await full.POST('/api/v1/administrators/{id}/actions/delete', {
      params: { path: { id: 0 } },
    });
    expect(bad.response.status).toBe(400);
  });
});
