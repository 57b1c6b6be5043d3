import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pino from 'pino';
import {
  type CmsClient,
  type CmsCredentials,
  type components,
  createCmsClient,
} from '../../client/src/index.ts';
import { digestApiKey } from '../../src/domain/crypto/apiKeys.ts';
import { signAccessToken } from '../../src/domain/crypto/tokens.ts';
import { formatDateTime } from '../../src/domain/dates.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

/*
 * API-key management over HTTP, through the typed client, with an administrator's token (every
 * scope) and with API keys carrying the ApiKeys scope. Every log line the app writes is captured:
 * the last test checks that no key it saw (created, reset, or used to call) appears in any of them.
 */

type ApiKey = components['schemas']['ApiKey'];

const lines: string[] = [];
/** Every secret the tests used or received: none may appear in a log line or a list answer. */
const secrets: string[] = [];
/** Every response the tests got: status line, headers and body, as received. */
const responses: { url: string; status: number; text: string }[] = [];

/** A typed client whose every response is recorded for the secrets scan. */
function as(credentials: CmsCredentials): CmsClient {
  return createCmsClient({
    baseUrl: typed.baseUrl,
    ...credentials,
    fetch: async (request) => {
      const response = await fetch(request);
      const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
      responses.push({
        url: request.url,
        status: response.status,
        text: `${headers}\n\n${await response.clone().text()}`,
      });
      return response;
    },
  });
}

/** Records a supertest response for the secrets scan. */
function recorded<R extends { status: number; text: string; headers: Record<string, string> }>(
  url: string,
  response: R,
): R {
  responses.push({
    url,
    status: response.status,
    text: `${JSON.stringify(response.headers)}\n\n${response.text}`,
  });
  return response;
}

let app: TestApp;
let typed: TypedClient;
/** Carries only ApiKeys. */
let managerKey: string;
let managerId: number;
/** An administrator's access token: every scope. */
let adminToken: string;
let admin: CmsClient;
let manager: CmsClient;

beforeAll(async () => {
  app = await startTestApp({
    logger: pino({ level: 'trace' }, { write: (line: string) => lines.push(line) }),
  });
  managerKey = await app.createApiKey(['ApiKeys', 'STL'], { title: 'key manager' });
  managerId = (await app.db.apiKey.findUniqueOrThrow({ where: { digest: digestApiKey(managerKey) } })).id;
  const administrator = await app.db.administrator.create({
    data: { userName: 'operator', passwordHash: 'x', passwordSalt: 'x' },
  });
  adminToken = signAccessToken(
    { id: administrator.id, kind: 'administrator', scopes: [], version: administrator.tokenVersion },
    app.config.cmsSecret,
    { expiresIn: 3600 },
  ).token;
  secrets.push(managerKey, adminToken);
  typed = await startClient(app, managerKey);
  manager = as({ apiKey: managerKey });
  admin = as({ bearerToken: adminToken });
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

const list = (client: CmsClient = admin) => client.GET('/api/v1/apiKeys');
const create = (body: components['schemas']['CreateApiKeyRequest'], client: CmsClient = admin) =>
  client.POST('/api/v1/apiKeys', { body });
const update = (id: number, body: components['schemas']['UpdateApiKeyRequest'], client: CmsClient = admin) =>
  client.POST('/api/v1/apiKeys/{id}/actions/update', { params: { path: { id } }, body });
const remove = (id: number, client: CmsClient = admin) =>
  client.POST('/api/v1/apiKeys/{id}/actions/delete', { params: { path: { id } } });
const reset = (id: number, client: CmsClient = admin) =>
  client.POST('/api/v1/apiKeys/{id}/actions/reset', { params: { path: { id } } });
/** A call that needs the STL scope, to see whether a key works. */
const useKey = (apiKey: string) => as({ apiKey }).GET('/api/v1/stl/sites');

const inAYear = () => formatDateTime(new Date(Date.now() + 365 * 86_400_000));

function expectProblem(
  result: { response: Response; error?: unknown },
  status: number,
  type: string,
  detail: string | RegExp,
) {
  expect(result.response.status).toBe(status);
  expect(result.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(result.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}${type}`, status });
  const actual = (result.error as { detail: string }).detail;
  if (typeof detail === 'string') expect(actual).toBe(detail);
  else expect(actual).toMatch(detail);
}

describe('create', () => {
  test('answers the key once with its record; only the digest is stored', async () => {
    const expiresAt = inAYear();
    const { data, response } = await create({
      title: 'Partner feed',
      scopes: ['STL', 'Contents'],
      expiresAt,
      rateLimitPerMinute: 120,
    });
    expect(response.status).toBe(201);
    if (data === undefined) throw new Error('no body');
    secrets.push(data.key);
    expect(data.key).toMatch(/^cms_[A-Za-z0-9_-]{43}$/);
    expect(data.apiKey).toEqual({
      id: expect.any(Number),
      title: 'Partner feed',
      scopes: ['Contents', 'STL'],
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      lastUsedAt: null,
      expiresAt,
      revokedAt: null,
      rateLimitPerMinute: 120,
    });
    const row = await app.db.apiKey.findUniqueOrThrow({ where: { id: data.apiKey.id } });
    expect(row.digest).toBe(digestApiKey(data.key));
    expect(JSON.stringify(row)).not.toContain(data.key);
    expect((await useKey(data.key)).response.status).toBe(200);
  });

  test('a key with the ApiKeys scope may grant the scopes it carries', async () => {
    const { data, response } = await create({ title: 'reader', scopes: ['STL'] }, manager);
    expect(response.status).toBe(201);
    if (data === undefined) throw new Error('no body');
    secrets.push(data.key);
    expect(data.apiKey).toMatchObject({
      title: 'reader',
      scopes: ['STL'],
      expiresAt: null,
      rateLimitPerMinute: null,
    });
  });

  test('403 when a key grants a scope it does not carry', async () => {
    const before = await app.db.apiKey.count();
    expectProblem(
      await create({ title: 'escalation', scopes: ['STL', 'Administrators'] }, manager),
      403,
      'forbidden',
      "Granting these scopes needs the 'Administrators' scope, which these credentials do not carry",
    );
    expect(await app.db.apiKey.count()).toBe(before);
  });

  test('400 for an expiry in the past, a blank title, an unknown scope or an unknown field', async () => {
    expectProblem(
      await create({ title: 'old', scopes: ['STL'], expiresAt: '2020-01-01 00:00:00' }),
      400,
      'validation',
      /expiresAt.*must be in the future/,
    );
    expectProblem(
      await create({ title: 'bad date', scopes: ['STL'], expiresAt: '2030-02-30 00:00:00' }),
      400,
      'validation',
      /expiresAt.*is not a date on the calendar/,
    );
    const post = (body: object) =>
      app.request
        .post('/api/v1/apiKeys')
        .set('Authorization', `Bearer ${adminToken}`)
        .send(body)
        .then((response) => recorded('/api/v1/apiKeys', response));
    for (const body of [
      { title: '', scopes: ['STL'] },
      { title: 'x', scopes: ['Everything'] },
      { title: 'x', scopes: ['STL'], rateLimitPerMinute: 0 },
      { title: 'x', scopes: ['STL'], key: 'cms_chosen' },
      { scopes: ['STL'] },
    ]) {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  test('401 without credentials or with an unknown key; 403 for a key without ApiKeys', async () => {
    const anonymous = as({});
    expectProblem(
      await create({ title: 'x', scopes: ['STL'] }, anonymous),
      401,
      'unauthorized',
      /needs an API key/,
    );
    expectProblem(
      await create({ title: 'x', scopes: ['STL'] }, as({ apiKey: 'cms_unknown' })),
      401,
      'unauthorized',
      'The API key is not valid',
    );
    const stlOnly = await app.createApiKey(['STL'], { title: 'stl only' });
    secrets.push(stlOnly);
    expectProblem(
      await create({ title: 'x', scopes: ['STL'] }, as({ apiKey: stlOnly })),
      403,
      'forbidden',
      "The credentials do not carry the 'ApiKeys' scope this operation needs",
    );
  });
});

describe('list', () => {
  test('every key by id, without the key or its digest', async () => {
    const { data, response } = await list();
    expect(response.status).toBe(200);
    const rows = await app.db.apiKey.findMany({ orderBy: { id: 'asc' } });
    expect(data?.value.map((key: ApiKey) => key.id)).toEqual(rows.map((row) => row.id));
    expect(data?.value[0]).toMatchObject({ id: managerId, title: 'key manager', scopes: ['STL', 'ApiKeys'] });
    const text = JSON.stringify(data);
    for (const row of rows) expect(text).not.toContain(row.digest);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  test('a key with ApiKeys may list; 401 and 403 otherwise', async () => {
    expect((await list(manager)).response.status).toBe(200);
    expectProblem(await list(as({})), 401, 'unauthorized', /needs an API key/);
    const contentsOnly = await app.createApiKey(['Contents']);
    secrets.push(contentsOnly);
    expectProblem(
      await list(as({ apiKey: contentsOnly })),
      403,
      'forbidden',
      "The credentials do not carry the 'ApiKeys' scope this operation needs",
    );
  });

  test('lastUsedAt is set by a use of the key', async () => {
    const { data } = await create({ title: 'used', scopes: ['STL'] });
    if (data === undefined) throw new Error('no body');
    secrets.push(data.key);
    expect((await useKey(data.key)).response.status).toBe(200);
    await backgroundSettled();
    const listed = (await list()).data?.value.find((key: ApiKey) => key.id === data.apiKey.id);
    const row = await app.db.apiKey.findUniqueOrThrow({ where: { id: data.apiKey.id } });
    expect(row.lastUsedAt).not.toBeNull();
    expect(listed?.lastUsedAt).toBe(formatDateTime(row.lastUsedAt as Date));
  });
});

/** Waits for the background writes (lastUsedAt) the app started. */
async function backgroundSettled() {
  await app.services.background.settled();
}

describe('update', () => {
  test('changes only the fields present; null removes the expiry and the rate limit', async () => {
    const { data: created } = await create({
      title: 'to change',
      scopes: ['STL'],
      expiresAt: inAYear(),
      rateLimitPerMinute: 50,
    });
    if (created === undefined) throw new Error('no body');
    secrets.push(created.key);
    const id = created.apiKey.id;
    const renamed = await update(id, { title: 'changed' });
    expect(renamed.response.status).toBe(200);
    expect(renamed.data).toEqual({ ...created.apiKey, title: 'changed' });
    const cleared = await update(id, {
      scopes: ['Contents', 'STL'],
      expiresAt: null,
      rateLimitPerMinute: null,
    });
    expect(cleared.data).toEqual({
      ...created.apiKey,
      title: 'changed',
      scopes: ['Contents', 'STL'],
      expiresAt: null,
      rateLimitPerMinute: null,
    });
    const row = await app.db.apiKey.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({
      title: 'changed',
      scopes: 'Contents,STL',
      expiresAt: null,
      rateLimitPerMinute: null,
    });
    // The key itself did not change.
    expect(row.digest).toBe(digestApiKey(created.key));
  });

  test('scopes taken away take effect on the next request', async () => {
    const { data: created } = await create({ title: 'narrowed', scopes: ['STL'] });
    if (created === undefined) throw new Error('no body');
    secrets.push(created.key);
    expect((await useKey(created.key)).response.status).toBe(200);
    await update(created.apiKey.id, { scopes: ['Contents'] });
    expect((await useKey(created.key)).response.status).toBe(403);
  });

  test('403 when a key changes a stronger key or grants more than it carries', async () => {
    const { data: strong } = await create({ title: 'strong', scopes: ['Administrators'] });
    if (strong === undefined) throw new Error('no body');
    secrets.push(strong.key);
    expectProblem(
      await update(strong.apiKey.id, { title: 'taken' }, manager),
      403,
      'forbidden',
      `Changing API key ${strong.apiKey.id} needs the 'Administrators' scope, which these credentials do not carry`,
    );
    const { data: weak } = await create({ title: 'weak', scopes: ['STL'] }, manager);
    if (weak === undefined) throw new Error('no body');
    secrets.push(weak.key);
    expectProblem(
      await update(weak.apiKey.id, { scopes: ['Users'] }, manager),
      403,
      'forbidden',
      "Granting these scopes needs the 'Users' scope, which these credentials do not carry",
    );
    expect((await app.db.apiKey.findUniqueOrThrow({ where: { id: strong.apiKey.id } })).title).toBe('strong');
    expect((await app.db.apiKey.findUniqueOrThrow({ where: { id: weak.apiKey.id } })).scopes).toBe('STL');
  });

  test('404 for a key that does not exist; 400 for bad input; 401 without credentials', async () => {
    expectProblem(await update(999_999, { title: 'x' }), 404, 'not-found', 'API key 999999 does not exist');
    expectProblem(
      await update(managerId, { expiresAt: '2001-01-01 00:00:00' }),
      400,
      'validation',
      /expiresAt/,
    );
    const post = (path: string, body: object) =>
      app.request
        .post(path)
        .set('Authorization', `Bearer ${adminToken}`)
        .send(body)
        .then((response) => recorded(path, response));
    expect((await post(`/api/v1/apiKeys/${managerId}/actions/update`, { digest: 'x' })).status).toBe(400);
    expect(
      (await post(`/api/v1/apiKeys/${managerId}/actions/update`, { rateLimitPerMinute: -1 })).status,
    ).toBe(400);
    expect((await post('/api/v1/apiKeys/abc/actions/update', { title: 'x' })).status).toBe(400);
    expectProblem(await update(managerId, { title: 'x' }, as({})), 401, 'unauthorized', /needs an API key/);
  });
});

describe('delete', () => {
  test('answers the record and the key stops at once', async () => {
    const { data: created } = await create({ title: 'to delete', scopes: ['STL'] }, manager);
    if (created === undefined) throw new Error('no body');
    secrets.push(created.key);
    expect((await useKey(created.key)).response.status).toBe(200);
    await backgroundSettled();
    const { data, response } = await remove(created.apiKey.id, manager);
    expect(response.status).toBe(200);
    expect(data).toEqual({ ...created.apiKey, lastUsedAt: expect.stringMatching(/^\d{4}-/) });
    expect(await app.db.apiKey.findUnique({ where: { id: created.apiKey.id } })).toBeNull();
    expectProblem(await useKey(created.key), 401, 'unauthorized', 'The API key is not valid');
    expectProblem(
      await remove(created.apiKey.id),
      404,
      'not-found',
      `API key ${created.apiKey.id} does not exist`,
    );
  });

  test('403 for a stronger key; 401 without credentials', async () => {
    const { data: strong } = await create({ title: 'strong 2', scopes: ['Users', 'STL'] });
    if (strong === undefined) throw new Error('no body');
    secrets.push(strong.key);
    expectProblem(
      await remove(strong.apiKey.id, manager),
      403,
      'forbidden',
      `Deleting API key ${strong.apiKey.id} needs the 'Users' scope, which these credentials do not carry`,
    );
    expectProblem(await remove(strong.apiKey.id, as({})), 401, 'unauthorized', /needs an API key/);
    expect(await app.db.apiKey.findUnique({ where: { id: strong.apiKey.id } })).not.toBeNull();
  });
});

describe('reset', () => {
  test('a new secret, once; the old one stops at once; the record stays', async () => {
    const { data: created } = await create({ title: 'to reset', scopes: ['STL'], rateLimitPerMinute: 500 });
    if (created === undefined) throw new Error('no body');
    secrets.push(created.key);
    expect((await useKey(created.key)).response.status).toBe(200);
    const { data, response } = await reset(created.apiKey.id);
    expect(response.status).toBe(200);
    if (data === undefined) throw new Error('no body');
    secrets.push(data.key);
    expect(data.key).not.toBe(created.key);
    expect(data.apiKey).toMatchObject({
      id: created.apiKey.id,
      title: 'to reset',
      scopes: ['STL'],
      rateLimitPerMinute: 500,
    });
    expectProblem(await useKey(created.key), 401, 'unauthorized', 'The API key is not valid');
    expect((await useKey(data.key)).response.status).toBe(200);
  });

  test('403 for a stronger key, 404 for none, 401 without credentials', async () => {
    const { data: strong } = await create({ title: 'strong 3', scopes: ['Others'] });
    if (strong === undefined) throw new Error('no body');
    secrets.push(strong.key);
    expectProblem(
      await reset(strong.apiKey.id, manager),
      403,
      'forbidden',
      `Resetting API key ${strong.apiKey.id} needs the 'Others' scope, which these credentials do not carry`,
    );
    const row = await app.db.apiKey.findUniqueOrThrow({ where: { id: strong.apiKey.id } });
    expect(row.digest).toBe(digestApiKey(strong.key));
    expectProblem(await reset(999_998), 404, 'not-found', 'API key 999998 does not exist');
    expectProblem(await reset(strong.apiKey.id, as({})), 401, 'unauthorized', /needs an API key/);
  });
});

describe('secrets', () => {
  test('a key sent as the apiKey query parameter is not logged or answered', async () => {
    const response = recorded(
      '/api/v1/apiKeys?apiKey=…',
      await app.request.get(`/api/v1/apiKeys?apiKey=${encodeURIComponent(managerKey)}`),
    );
    expect(response.status).toBe(200);
  });

  test('a key appears only in the answer that issued it; none appears in any other answer', () => {
    expect(responses.length).toBeGreaterThan(40);
    let issued = 0;
    for (const { url, status, text } of responses) {
      const issuing =
        status < 300 && /\/api\/v1\/apiKeys(\/\d+\/actions\/reset)?$/.test(url) && /"key":/.test(text);
      let scanned = text;
      if (issuing) {
        const body = JSON.parse(text.slice(text.indexOf('\n\n') + 2)) as { key: string };
        expect(secrets).toContain(body.key);
        // The key is in its own field, and only there (not in headers, not in the record).
        scanned = text.replace(`"key":"${body.key}"`, '');
        issued++;
      }
      for (const secret of secrets)
        expect({ url, leaked: scanned.includes(secret) }).toEqual({ url, leaked: false });
    }
    expect(issued).toBeGreaterThan(8);
  });

  test('no key or token used or answered appears in any log line', async () => {
    await backgroundSettled();
    expect(secrets.length).toBeGreaterThan(15);
    // Requests were logged, with and without errors (so the scan looked at something real).
    expect(lines.some((line) => line.includes('/api/v1/apiKeys?apiKey='))).toBe(true);
    expect(lines.some((line) => line.includes('"statusCode":403'))).toBe(true);
    const logged = lines.join('\n');
    for (const secret of secrets) expect(logged).not.toContain(secret);
    // Nor any digest of a key (the database's copy).
    for (const secret of secrets) expect(logged).not.toContain(digestApiKey(secret));
  });
});
