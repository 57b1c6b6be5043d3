import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pino from 'pino';
import supertest from 'supertest';
import { composeServices } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { createDb } from '../../src/db/client.ts';
import {
  DomainError,
  forbidden,
  invalid,
  invalidFields,
  notFound,
  unauthenticated,
} from '../../src/domain/errors.ts';
import { createApp } from '../../src/http/app.ts';
import { PROBLEM_TYPE_BASE, RETRY_AFTER_SECONDS } from '../../src/http/problem.ts';
import { ping } from '../../src/operations/system/ping.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let app: TestApp;
let key: string;
let siteId: number;

beforeAll(async () => {
  app = await startTestApp();
  key = await app.createApiKey('all');
  siteId = (await app.db.site.create({ data: { siteDir: 'main', siteName: 'Main site' } })).id;
});
afterAll(() => app.close());

const list = () => app.request.post('/api/v1/contents').set('X-SS-API-KEY', key);

function expectProblem(
  response: { status: number; body: Record<string, unknown>; headers: Record<string, string> },
  status: number,
  kind: string,
  title: string,
) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ type: PROBLEM_TYPE_BASE + kind, title, status });
  expect(typeof response.body.detail).toBe('string');
  expect(response.body.message).toBe(response.body.detail);
  expect(JSON.stringify(response.body)).not.toMatch(/\n\s+at /);
}

describe('requests the contract refuses', () => {
  test('malformed JSON is a 400 problem that does not echo the body', async () => {
    const response = await list()
      .set('Content-Type', 'application/json')
      .send('{"siteId": 1, "password": "hunter2"');
    expectProblem(response, 400, 'malformed-json', 'Bad Request');
    expect(response.body.detail).toBe('The request body is not valid JSON');
    expect(response.text).not.toContain('hunter2');
  });

  test('an unknown route is a 404 problem', async () => {
    const response = await app.request.get('/api/v1/nothing-here');
    expectProblem(response, 404, 'not-found', 'Not Found');
    expect(response.body.detail).toBe('There is no operation at GET /api/v1/nothing-here');
  });

  test('an operation of the contract without a handler is a 404 problem', async () => {
    const only = await startTestApp({ handlers: { ping } });
    try {
      const response = await only.request.get('/healthz');
      expectProblem(response, 404, 'not-found', 'Not Found');
      expect(response.body.detail).toBe(
        'Operation healthz (GET /healthz) is described in the contract but not implemented in this version',
      );
      expect((await only.request.get('/api/v1/ping')).text).toBe('pong');
    } finally {
      await only.close();
    }
  });

  test('a method the path does not have is a 405 with Allow', async () => {
    const response = await app.request.delete('/api/v1/ping');
    expectProblem(response, 405, 'method-not-allowed', 'Method Not Allowed');
    expect(response.headers.allow).toBe('GET');
  });

  test('a body of another media type is a 415', async () => {
    const response = await list().set('Content-Type', 'text/plain; charset=utf-8').send('siteId=1');
    expectProblem(response, 415, 'unsupported-media-type', 'Unsupported Media Type');
    expect(response.body.detail).toBe(
      "Content-Type 'text/plain' is not supported here; send application/json",
    );
    const bare = await app.request.post('/api/v1/contents').set('X-SS-API-KEY', key);
    expectProblem(bare, 415, 'unsupported-media-type', 'Unsupported Media Type');
    expect(bare.body.detail).toBe('The request has no Content-Type; send the body as application/json');
  });

  test('a body in an encoding or charset the parser does not know is a 415', async () => {
    for (const [header, value] of [
      ['Content-Encoding', 'compress'],
      ['Content-Type', 'application/json; charset=latin2'],
    ] as const) {
      const response = await list().set('Content-Type', 'application/json').set(header, value).send('{}');
      expectProblem(response, 415, 'unsupported-media-type', 'Unsupported Media Type');
    }
  });

  test('text with a NUL character is a 400 naming where, on every database', async () => {
    const response = await list().send({ siteId: 1, wheres: [{ column: 'title', value: 'a\u0000b' }] });
    expectProblem(response, 400, 'validation', 'Bad Request');
    expect(response.body.errors).toEqual([
      { path: '/body/wheres/0/value', message: 'must not contain the NUL character' },
    ]);
    const inQuery = await app.request.get('/api/v1/ping?x=%00');
    expect(inQuery.status).toBe(400);
    expect(inQuery.body.errors[0].path).toBe('/query/x');
  });

  test('a body that cannot be read (corrupt gzip) is a 400', async () => {
    const response = await list()
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('not gzip');
    expectProblem(response, 400, 'bad-request', 'Bad Request');
    expect(response.body.detail).toBe('The request could not be read');
  });

  test('a body over the limit is a 413', async () => {
    const response = await list().send({ siteId, padding: 'x'.repeat(6 * 1024 * 1024) });
    expectProblem(response, 413, 'payload-too-large', 'Payload Too Large');
  });

  test('a body field of the wrong type is a 400 listing the field; JSON bodies are not coerced', async () => {
    for (const siteIdValue of ['one', '1']) {
      const response = await list().send({ siteId: siteIdValue });
      expectProblem(response, 400, 'validation', 'Bad Request');
      expect(response.body.errors).toEqual([{ path: '/body/siteId', message: 'must be integer' }]);
    }
  });

  test('an unknown body field is a 400 naming the field', async () => {
    const response = await list().send({ siteId, foo: 1 });
    expectProblem(response, 400, 'validation', 'Bad Request');
    expect(response.body.errors).toEqual([{ path: '/body/foo', message: "unknown field 'foo'" }]);
    expect(response.body.detail).toContain("unknown field 'foo'");
  });

  test('a missing required field is a 400 naming it', async () => {
    const response = await list().send({});
    expectProblem(response, 400, 'validation', 'Bad Request');
    expect(response.body.errors).toEqual([
      { path: '/body/siteId', message: "must have required property 'siteId'" },
    ]);
  });

  test('path parameters are coerced, and a non-integer one is a 400', async () => {
    const response = await app.request.get('/api/v1/channels/abc/1').set('X-SS-API-KEY', key);
    expectProblem(response, 400, 'validation', 'Bad Request');
    expect(response.body.errors).toEqual([
      { path: '/path/siteId', message: 'must be an integer written in plain digits' },
    ]);
    // Coerced "999" reaches the handler as a number and names a site that does not exist.
    expectProblem(
      await app.request.get('/api/v1/channels/999/999').set('X-SS-API-KEY', key),
      404,
      'not-found',
      'Not Found',
    );
  });

  test('an unknown query parameter is a 400, but apiKey is not unknown', async () => {
    const response = await app.request.get('/healthz').query({ verbose: '1' });
    expectProblem(response, 400, 'validation', 'Bad Request');
    expect(response.body.errors).toEqual([
      { path: '/query/verbose', message: "Unknown query parameter 'verbose'" },
    ]);
    expect((await app.request.get('/healthz').query({ apiKey: key })).status).toBe(200);
  });

  test('a real handler error reaches the client as its problem', async () => {
    const response = await list().send({ siteId, perPage: app.config.maxPerPage + 1 });
    expectProblem(response, 400, 'validation', 'Bad Request');
    expect((await list().send({ siteId: siteId + 1000 })).status).toBe(404);
  });
});

describe('errors raised by handlers', () => {
  /** healthz of this app runs whatever the test puts here: the mapper is exercised through the whole pipeline. */
  let behaviour: () => Promise<{ status: 'ok' }>;
  let raising: TestApp;

  beforeAll(async () => {
    raising = await startTestApp({ handlers: { healthz: () => behaviour() } });
  });
  afterAll(() => raising.close());

  const raise = (error: Error) => {
    behaviour = async () => {
      throw error;
    };
  };

  const cases: [string, DomainError, number, string, string][] = [
    ['validation', invalid('perPage must be at most 1000'), 400, 'validation', 'Bad Request'],
    ['conflict', new DomainError('conflict', 'indexName "news" is taken'), 400, 'conflict', 'Bad Request'],
    [
      'captcha-invalid',
      new DomainError('captcha-invalid', 'Wrong code'),
      400,
      'captcha-invalid',
      'Bad Request',
    ],
    ['unauthenticated', unauthenticated('The API key is not valid'), 401, 'unauthorized', 'Unauthorized'],
    [
      'login-failed',
      new DomainError('login-failed', 'Wrong account or password'),
      401,
      'login-failed',
      'Unauthorized',
    ],
    ['locked-out', new DomainError('locked-out', 'Locked for 15 minutes'), 401, 'locked-out', 'Unauthorized'],
    ['forbidden', forbidden('Not yours'), 403, 'forbidden', 'Forbidden'],
    ['not-found', notFound('Content 42 does not exist'), 404, 'not-found', 'Not Found'],
  ];

  test.each(cases)('DomainError %s', async (_kind, error, status, type, title) => {
    raise(error);
    const response = await raising.request.get('/healthz');
    expectProblem(response, status, type, title);
    expect(response.body.detail).toBe(error.message);
    expect(response.headers['www-authenticate'] !== undefined).toBe(status === 401);
  });

  test('an invalid DomainError names fields; the mapper places them where the operation takes input', async () => {
    // healthz takes neither a body nor parameters: fields of such an operation are query fields.
    raise(invalidFields([{ field: 'wheres/0/column', message: 'unknown column "titel"' }]));
    const response = await raising.request.get('/healthz');
    expectProblem(response, 400, 'validation', 'Bad Request');
    expect(response.body.detail).toBe('wheres/0/column unknown column "titel"');
    expect(response.body.errors).toEqual([
      { path: '/query/wheres/0/column', message: 'unknown column "titel"' },
    ]);
  });

  test('a unique-constraint violation (P2002) is a 400 conflict', async () => {
    behaviour = async () => {
      await raising.db.systemSetting.create({ data: { key: 'dup', value: '1' } });
      await raising.db.systemSetting.create({ data: { key: 'dup', value: '2' } });
      return { status: 'ok' };
    };
    const response = await raising.request.get('/healthz');
    expectProblem(response, 400, 'conflict', 'Bad Request');
    expect(response.body.detail).toBe('A record with the same unique value already exists');
  });

  test('an unexpected error is a bare 500 that says nothing about it', async () => {
    raise(new Error('SELECT * FROM "ApiKey" WHERE digest = $1 failed for cms_secretvalue123'));
    const response = await raising.request.get('/healthz');
    expectProblem(response, 500, 'internal', 'Internal Server Error');
    expect(response.body.detail).toBe('Internal Server Error');
    expect(response.text).not.toMatch(/SELECT|ApiKey|cms_secret/);
  });

  test('a response that drifts from the contract is a 500 naming the field (outside production)', async () => {
    behaviour = async () => JSON.parse('{"status":"ok","uptime":5}');
    const response = await raising.request.get('/healthz');
    expectProblem(response, 500, 'internal', 'Internal Server Error');
    expect(response.body.detail).toContain('/response/uptime');
  });
});

// Nothing listens on port 1: connections are refused at once. (Made here: a describe body cannot await.)
const UNREACHABLE = 'postgresql://cms:secret@127.0.0.1:1/cms';
const unreachable = await createDb(UNREACHABLE);
const unreachableServices = await composeServices(
  { ...loadConfig({ NODE_ENV: 'test', DATABASE_URL: UNREACHABLE }), cmsSecret: 'y'.repeat(40) },
  pino({ level: 'silent' }),
  { db: unreachable },
);

describe('an unreachable database', () => {
  const down = createApp(unreachableServices);

  afterAll(async () => {
    await unreachableServices.close();
    await unreachable.db.$disconnect();
  });

  test('readyz is a 503 problem with Retry-After', async () => {
    const response = await supertest(down).get('/readyz');
    expectProblem(response, 503, 'service-unavailable', 'Service Unavailable');
    expect(response.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
    expect(response.text).not.toContain('secret');
  });

  test('healthz still answers: the process is alive', async () => {
    expect((await supertest(down).get('/healthz')).status).toBe(200);
  });

  test('any operation that needs the database is a 503 with Retry-After', async () => {
    const response = await supertest(down)
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', 'cms_anything')
      .send({ siteId: 1 });
    expectProblem(response, 503, 'service-unavailable', 'Service Unavailable');
    expect(response.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
    expect(response.body.detail).toBe('The database is unavailable; retry later');
  });
});
