import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { signAccessToken } from '../../src/domain/crypto/tokens.ts';
import { SCOPES } from '../../src/domain/principal.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

/*
 * restartSystem over HTTP, in a process without a supervisor: the capability the app reaches is a
 * recorder (the real one, IPC to the supervisor, is proven by test/process/restart.test.ts).
 * Requests the contract allows go through the typed client; the rest through supertest.
 */

const PATH = '/api/v1/actions/restart';

let app: TestApp;
let typed: TypedClient;
let calls = 0;
/** What the recorder answers: whether the "supervisor" accepted the restart. */
let accepts = true;

beforeAll(async () => {
  app = await startTestApp({
    restart: async () => {
      calls += 1;
      return accepts;
    },
  });
  typed = await startClient(app);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

const restart = (credentials: { apiKey: string } | { bearerToken: string } | Record<string, never>) =>
  typed.clientAs(credentials).POST('/api/v1/actions/restart');

describe('POST /api/v1/actions/restart', () => {
  test('a key with the Others scope asks for the restart once and gets {value: true}', async () => {
    const key = await app.createApiKey(['Others']);
    const before = calls;
    const { data, response } = await restart({ apiKey: key });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(data).toEqual({ value: true });
    expect(calls).toBe(before + 1);
  });

  test('the key may come as the apiKey query parameter, and an administrator token works too', async () => {
    const key = await app.createApiKey(['Others']);
    const before = calls;
    const byQuery = await app.request.post(PATH).query({ apiKey: key });
    expect(byQuery.status).toBe(200);
    expect(byQuery.body).toEqual({ value: true });
    const admin = await app.db.administrator.create({
      data: { userName: 'operator', passwordHash: 'x', passwordSalt: 'x' },
    });
    const { token } = signAccessToken(
      { id: admin.id, kind: 'administrator', scopes: [], version: admin.tokenVersion },
      app.config.cmsSecret,
      { expiresIn: 600 },
    );
    const byToken = await restart({ bearerToken: token });
    expect(byToken.response.status).toBe(200);
    expect(byToken.data).toEqual({ value: true });
    expect(calls).toBe(before + 2);
  });

  test('a process whose supervisor does not take the request answers {value: false}', async () => {
    const key = await app.createApiKey(['Others']);
    accepts = false;
    try {
      const { data, response } = await restart({ apiKey: key });
      expect(response.status).toBe(200);
      expect(data).toEqual({ value: false });
    } finally {
      accepts = true;
    }
  });

  test('without credentials: 401, and no restart is asked for', async () => {
    const before = calls;
    const { error, response } = await restart({});
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}unauthorized`, status: 401 });
    const unknown = await restart({ apiKey: 'cms_not-a-key-of-this-service' });
    expect(unknown.response.status).toBe(401);
    expect(unknown.error).toMatchObject({ detail: 'The API key is not valid' });
    expect(calls).toBe(before);
  });

  test('a key with every scope but Others: 403 naming the scope, and no restart is asked for', async () => {
    const key = await app.createApiKey(SCOPES.filter((scope) => scope !== 'Others'));
    const before = calls;
    const { error, response } = await restart({ apiKey: key });
    expect(response.status).toBe(403);
    expect(error).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}forbidden`,
      status: 403,
      detail: "The credentials do not carry the 'Others' scope this operation needs",
    });
    expect(calls).toBe(before);
  });

  test('a query parameter the contract does not declare: 400, and no restart is asked for', async () => {
    const key = await app.createApiKey(['Others']);
    const before = calls;
    const response = await app.request.post(PATH).query({ force: 'true' }).set('X-SS-API-KEY', key);
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/force/);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(calls).toBe(before);
  });
});

describe('an app without a restart capability', () => {
  test('is an unsupervised process: {value: false}', async () => {
    const alone = await startTestApp();
    try {
      const key = await alone.createApiKey(['Others']);
      const response = await alone.request.post(PATH).set('X-SS-API-KEY', key);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ value: false });
    } finally {
      await alone.close();
    }
  });
});
