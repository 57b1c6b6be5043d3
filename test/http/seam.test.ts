import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import supertest from 'supertest';
import { CONTRACT_FILE, contract } from '../../src/contract.ts';
import { invalidFields } from '../../src/domain/errors.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { handlers } from '../../src/operations/registry.ts';
import type { OperationInput } from '../../src/operations/types.ts';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * The handler seam: what a handler can receive (declared header and cookie parameters, the
 * principal) and answer (a full reply: status, headers, cookies, media type, bytes), and where the
 * error mapper places the fields a domain error names. The captcha operations serve as subjects:
 * their contract declares a cookie parameter and a PNG response; the handlers here are the test's
 * own, in place of the real ones (test/captcha covers those).
 */

/** The first bytes of every PNG file, and enough to tell bytes from text on the wire. */
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);

let app: TestApp;
let key: string;
let seenCheck: OperationInput<'checkCaptcha'> | undefined;
let seenPrincipal: Principal | undefined;
let undeclared = false;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents', 'Channels', 'STL'], {
    handlers: {
      ...handlers,
      getCaptcha: async ({ path }, { reply }) =>
        undeclared
          ? reply({ status: 201 as 200, mediaType: 'image/png', body: PNG })
          : reply({
              status: 200,
              mediaType: 'image/png',
              body: PNG,
              headers: { 'Cache-Control': 'no-store' },
              cookies: [
                {
                  name: 'ss-captcha',
                  value: `token-of-${path.name}`,
                  maxAge: 600,
                  httpOnly: true,
                  sameSite: 'lax',
                },
              ],
            }),
      checkCaptcha: async (input, { reply }) => {
        seenCheck = input;
        return reply({
          status: 200,
          mediaType: 'application/json',
          body: { value: true },
        });
      },
      stlGetSite: async ({ principal }) => {
        seenPrincipal = principal;
        throw invalidFields([{ field: 'siteDir', message: 'names no site' }]);
      },
      getChannel: async () => {
        throw invalidFields([{ field: 'channelId', message: 'is not a channel of this site' }]);
      },
    },
  }));
});
afterAll(() => app.close());

describe('replies', () => {
  test('a handler answers bytes with its own media type, headers and cookies', async () => {
    const response = await app.request
      .get('/api/v1/captcha/login')
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('image/png');
    expect(response.headers['cache-control']).toBe('no-store');
    const [cookie = '', ...others] = response.headers['set-cookie'] ?? [];
    expect(others).toEqual([]);
    const expires = /; Expires=([^;]+);/.exec(cookie)?.[1] ?? '';
    expect(cookie).toBe(
      `ss-captcha=token-of-login; Max-Age=600; Path=/; Expires=${expires}; HttpOnly; SameSite=Lax`,
    );
    // Expires is the answer's time plus Max-Age; the Date header may fall in the next second.
    const lifetime = Date.parse(expires) - Date.parse(response.headers.date as string);
    expect(lifetime === 600_000 || lifetime === 599_000).toBe(true);
    expect([...(response.body as Buffer)]).toEqual([...PNG]);
  });

  test('a reply with a status the contract does not declare is a 500 naming it (outside production)', async () => {
    undeclared = true;
    try {
      const response = await app.request.get('/api/v1/captcha/login');
      expect(response.status).toBe(500);
      expect(response.body.type).toBe(`${PROBLEM_TYPE_BASE}internal`);
    } finally {
      undeclared = false;
    }
  });

  test('a plain body goes out with the operation’s declared success status and media type', async () => {
    const ping = await app.request.get('/api/v1/ping');
    expect(ping.status).toBe(200);
    expect(ping.headers['content-type']).toMatch(/^text\/plain/);
    expect(ping.text).toBe('pong');
  });
});

describe('input', () => {
  test('declared cookie parameters arrive by their contract name; credentials never do', async () => {
    // A plain request, not the app's agent: the agent would send back the cookie an image set.
    const response = await supertest(app.app)
      .post('/api/v1/captcha/login/actions/check')
      .set('Cookie', 'ss-captcha=abc.def; unrelated=1')
      .query({ apiKey: key })
      .send({ captcha: 'K7pQ' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ value: true });
    expect(seenCheck).toEqual({
      path: { name: 'login' },
      query: {},
      header: {},
      cookie: { 'ss-captcha': 'abc.def' },
      body: { captcha: 'K7pQ' },
      principal: { kind: 'anonymous' },
    });
  });

  test('a declared cookie parameter is validated like any other', async () => {
    const response = await supertest(app.app)
      .post('/api/v1/captcha/login/actions/check')
      .set('Cookie', `ss-captcha=${'x'.repeat(1025)}`)
      .send({ captcha: 'K7pQ' });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      expect.objectContaining({ path: expect.stringMatching(/^\/cookies?\/ss-captcha$/) }),
    ]);
  });

  test('the principal comes with the input', async () => {
    await app.request.get('/api/v1/stl/site').set('X-SS-API-KEY', key);
    expect(seenPrincipal).toMatchObject({ kind: 'apiKey', scopes: new Set(['Contents', 'Channels', 'STL']) });
  });
});

describe('field errors are placed where the operation takes its input', () => {
  test('query operations: /query/…', async () => {
    const response = await app.request
      .get('/api/v1/stl/site')
      .query({ siteDir: 'nope' })
      .set('X-SS-API-KEY', key);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}validation`,
      detail: 'siteDir names no site',
      errors: [{ path: '/query/siteDir', message: 'names no site' }],
    });
  });

  test('path parameters: /path/…', async () => {
    const response = await app.request.get('/api/v1/channels/1/2').set('X-SS-API-KEY', key);
    expect(response.body.errors).toEqual([
      { path: '/path/channelId', message: 'is not a channel of this site' },
    ]);
  });

  test('body operations: /body/…, including nested fields of the content query compiler', async () => {
    const response = await app.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({
        siteId: 1,
        wheres: [
          { column: 'title', value: 'x' },
          { column: 'titel', value: 'x' },
        ],
        orders: [{ column: 'nope', desc: true }],
      });
    expect(response.status).toBe(400);
    expect(response.body.type).toBe(`${PROBLEM_TYPE_BASE}validation`);
    expect(response.body.errors.map((error: { path: string }) => error.path)).toEqual([
      '/body/wheres/1',
      '/body/orders/0/column',
    ]);
  });
});

describe('one rule for aliases: both names with different values is a 400 on the alias', () => {
  test("a content's body and content", async () => {
    const update = (body: object) =>
      app.request.post('/api/v1/contents/1/2/1/actions/update').set('X-SS-API-KEY', key).send(body);
    const before = await app.db.content.findUniqueOrThrow({ where: { id: 1 } });
    const clash = await update({ body: '<p>new</p>', content: '<p>old</p>' });
    expect(clash.status).toBe(400);
    expect(clash.body.errors).toEqual([
      { path: '/body/content', message: 'differs from body (content is its alias; send one, or both alike)' },
    ]);
    expect((await app.db.content.findUniqueOrThrow({ where: { id: 1 } })).body).toBe(before.body);
    const alike = await update({ body: '<p>same</p>', content: '<p>same</p>' });
    expect(alike.status).toBe(200);
    expect(alike.body.body).toBe('<p>same</p>');
    const aliasOnly = await update({ content: '<p>by alias</p>' });
    expect(aliasOnly.body.body).toBe('<p>by alias</p>');
  });

  test("a channel's indexName and channelIndex", async () => {
    const update = (body: object) =>
      app.request.post('/api/v1/channels/1/4/actions/update').set('X-SS-API-KEY', key).send(body);
    const clash = await update({ indexName: 'a', channelIndex: 'b' });
    expect(clash.status).toBe(400);
    expect(clash.body.errors).toEqual([
      {
        path: '/body/channelIndex',
        message: 'differs from indexName (channelIndex is its alias; send one, or both alike)',
      },
    ]);
    expect((await update({ indexName: 'same-name', channelIndex: 'same-name' })).body.indexName).toBe(
      'same-name',
    );
  });

  test('an index name taken in the site is a conflict problem', async () => {
    const response = await app.request
      .post('/api/v1/channels/1/4/actions/update')
      .set('X-SS-API-KEY', key)
      .send({ indexName: 'news' });
    expect(response.status).toBe(409);
    expect(response.body.type).toBe(`${PROBLEM_TYPE_BASE}conflict`);
    expect(response.body.errors).toEqual([
      { path: '/body/indexName', message: 'must be unique within the site' },
    ]);
  });
});

describe('routes outside the contract', () => {
  test('the contract is served as YAML (as written) and as JSON (the same document)', async () => {
    const yaml = await app.request.get('/openapi.yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    expect(yaml.text).toBe(readFileSync(CONTRACT_FILE, 'utf8'));
    const json = await app.request.get('/openapi.json');
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.body.openapi).toBe('3.1.0');
    const operationIds = Object.values(
      json.body.paths as Record<string, Record<string, { operationId?: string }>>,
    )
      .flatMap((item) => Object.values(item).map((operation) => operation.operationId))
      .filter((id) => id !== undefined);
    expect(operationIds.sort()).toEqual(contract.operations.map((operation) => operation.operationId).sort());
  });

  test('they need no credentials and are not operations: other methods are not found', async () => {
    expect((await app.request.get('/openapi.json')).status).toBe(200);
    const post = await app.request.post('/openapi.json').send({});
    expect(post.status).toBe(404);
    expect(post.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  test('their paths match as routes do (any case, one trailing slash); nothing else reaches them', async () => {
    // The app enters their router only for the paths it may match (src/http/serviceRoutes.ts).
    const json = await app.request.get('/OpenAPI.JSON/');
    expect(json.status).toBe(200);
    expect(json.body.openapi).toBe('3.1.0');
    expect((await app.request.get('/favicon.ico/')).status).toBe(204);
    for (const path of ['/openapi.json//', '/openapi%2Ejson', '/openapiXjson', '/api/v1/openapi.json']) {
      const answer = await app.request.get(path);
      expect([path, answer.status]).toEqual([path, 404]);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });
});
