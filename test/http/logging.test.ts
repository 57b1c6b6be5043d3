import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pino from 'pino';
import { signAccessToken } from '../../src/domain/crypto/tokens.ts';
import { describeError, REDACTED, redactUrl, sanitizeMessage } from '../../src/http/logging.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/** Every line the app logs, as written (JSON text). */
const lines: string[] = [];
const logged = () => lines.join('');

let app: TestApp;
let failure: Error | undefined;

beforeAll(async () => {
  app = await startTestApp({
    logger: pino({ level: 'trace' }, { write: (line: string) => lines.push(line) }),
    handlers: {
      healthz: async () => {
        if (failure !== undefined) throw failure;
        return { status: 'ok' };
      },
    },
  });
});
afterAll(() => app.close());

describe('request logs', () => {
  test('contain no API key, token or cookie, wherever the client put them', async () => {
    const key = await app.createApiKey(['Contents']);
    const user = await app.db.user.create({
      data: { userName: 'logged', passwordHash: 'x', passwordSalt: 'x' },
    });
    const token = signAccessToken(
      { id: user.id, kind: 'user', scopes: ['Contents'], version: user.tokenVersion },
      app.config.cmsSecret,
      { expiresIn: 600 },
    ).token;
    const body = { siteId: 1 };
    lines.length = 0;
    await app.request.post('/api/v1/contents').set('X-SS-API-KEY', key).send(body);
    await app.request.post('/api/v1/contents').query({ apiKey: key, other: 'x' }).send(body);
    await app.request.post('/api/v1/contents').set('Authorization', `Bearer ${token}`).send(body);
    await app.request.get('/api/v1/ping').set('Cookie', 'session=s3cr3t-cookie').query({ apiKey: key });
    await app.request.post('/api/v1/contents').set('X-SS-API-KEY', 'cms_wrong-key-value').send(body);
    // Encoded spellings of the parameter's name: some authenticate, none may reach a log in clear.
    for (const query of [`%61piKey=${key}`, `api%4Bey=${key}`, `apiKey[]=${key}`, `apiKey%3D${key}`]) {
      await app.request.post(`/api/v1/contents?${query}`).send(body);
    }

    expect(lines.length).toBeGreaterThanOrEqual(5);
    const text = logged();
    expect(text).not.toContain(key);
    expect(text).not.toContain(token);
    expect(text).not.toContain('s3cr3t-cookie');
    expect(text).not.toContain('cms_wrong-key-value');
    const entries = lines.map((line) => JSON.parse(line));
    const urls = entries.map((entry) => entry.req?.url).filter(Boolean);
    expect(urls).toContain(`/api/v1/contents?apiKey=${REDACTED}&other=x`);
    const headerEntry = entries.find((entry) => entry.req?.headers?.['x-ss-api-key'] !== undefined);
    expect(headerEntry.req.headers['x-ss-api-key']).toBe(REDACTED);
    const bearerEntry = entries.find((entry) => entry.req?.headers?.authorization !== undefined);
    expect(bearerEntry.req.headers.authorization).toBe(REDACTED);
    const cookieEntry = entries.find((entry) => entry.req?.headers?.cookie !== undefined);
    expect(cookieEntry.req.headers.cookie).toBe(REDACTED);
  });

  test('an unexpected error is logged by name and one sanitised line: no stack, SQL or key', async () => {
    const error = new Error(
      'query failed: SELECT digest FROM "ApiKey" WHERE digest = \'abc\'\n    at secretFrame (x.ts:1:1)',
    );
    Object.assign(error, { code: 'XX000' });
    failure = error;
    lines.length = 0;
    try {
      expect((await app.request.get('/healthz')).status).toBe(500);
    } finally {
      failure = undefined;
    }
    const text = logged();
    expect(text).not.toContain('SELECT');
    expect(text).not.toContain('secretFrame');
    expect(text).not.toMatch(/\\n\s+at /);
    const entry = lines.map((line) => JSON.parse(line)).find((e) => e.msg === '500 Internal Server Error');
    expect(entry.err).toEqual({ name: 'Error', code: 'XX000', message: 'query failed: [SQL omitted]' });
  });

  test('each response carries a request id, and a sane caller id is kept', async () => {
    const generated = await app.request.get('/api/v1/ping');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await app.request.get('/api/v1/ping').set('X-Request-Id', 'trace-123');
    expect(kept.headers['x-request-id']).toBe('trace-123');
    const replaced = await app.request.get('/api/v1/ping').set('X-Request-Id', 'bad id with spaces');
    expect(replaced.headers['x-request-id']).not.toBe('bad id with spaces');
  });
});

describe('log sanitising', () => {
  test('redactUrl cuts credentials out of query strings', () => {
    expect(redactUrl('/a?apiKey=cms_abc&b=1')).toBe(`/a?apiKey=${REDACTED}&b=1`);
    expect(redactUrl('/a?b=1&apikey=cms_abc')).toBe(`/a?b=1&apikey=${REDACTED}`);
    expect(redactUrl('/a?b=1')).toBe('/a?b=1');
    expect(redactUrl('/a?access_token=t1&password=p')).toBe(
      `/a?access_token=${REDACTED}&password=${REDACTED}`,
    );
  });

  test.each([
    ['%61piKey=cms_k1', REDACTED],
    ['api%4Bey=cms_k1', REDACTED],
    ['apiKey[]=cms_k1', REDACTED],
    ['apiKey%3Dcms_k1', REDACTED],
    ['API_KEY=cms_k1', `API_KEY=${REDACTED}`],
    ['api+key=cms_k1', REDACTED],
    ['%zzapiKey=cms_k1', '%zzapiKey=cms_k1'],
  ])('redactUrl judges the decoded name: %s', (query, expected) => {
    expect(redactUrl(`/a?b=1&${query}`)).toBe(`/a?b=1&${expected}`);
  });

  test('sanitizeMessage keeps one useful line, without statements, keys or tokens', () => {
    const prisma =
      "\nInvalid `prisma.$queryRaw()` invocation:\n\n\nRaw query failed. Code: `N/A`. Message: `Can't reach database server at 127.0.0.1:1`";
    expect(sanitizeMessage(prisma)).toBe(
      "Raw query failed. Code: `N/A`. Message: `Can't reach database server at 127.0.0.1:1`",
    );
    expect(sanitizeMessage('syntax error near SELECT * FROM users')).toBe('syntax error near [SQL omitted]');
    expect(sanitizeMessage('bad key cms_abcdefghijklmnop')).toBe(`bad key ${REDACTED}`);
    expect(sanitizeMessage('header Bearer abc.def.ghi')).toBe(`header Bearer ${REDACTED}`);
    expect(sanitizeMessage('x'.repeat(500))).toHaveLength(201);
  });

  test('describeError keeps name, code and message only', () => {
    const error = Object.assign(new TypeError('boom'), { code: 'E1', meta: { query: 'SELECT 1' } });
    expect(describeError(error)).toEqual({ name: 'TypeError', code: 'E1', message: 'boom' });
    expect(describeError('text')).toEqual({ name: 'string', message: 'text' });
  });
});

describe('request logs at the warn level', () => {
  const quiet: string[] = [];
  let quietApp: TestApp;
  let mode: 'ok' | 'log' | 'fail' = 'ok';

  beforeAll(async () => {
    quietApp = await startTestApp({
      logger: pino({ level: 'warn' }, { write: (line: string) => quiet.push(line) }),
      handlers: {
        healthz: async (_input, { log }) => {
          if (mode === 'fail') throw new Error('boom');
          if (mode === 'log') log.warn('from the handler');
          return { status: 'ok' };
        },
      },
    });
  });
  afterAll(() => quietApp.close());

  test('a successful request writes no line; a handler logs with the request bound; a failure logs both lines', async () => {
    quiet.length = 0;
    mode = 'ok';
    expect((await quietApp.request.get('/healthz')).status).toBe(200);
    expect(quiet).toEqual([]);

    mode = 'log';
    const logged = await quietApp.request.get('/healthz').set('X-Request-Id', 'bound-1');
    expect(logged.status).toBe(200);
    const entries = quiet.map((line) => JSON.parse(line));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      msg: 'from the handler',
      req: { id: 'bound-1', method: 'GET', url: '/healthz' },
    });

    quiet.length = 0;
    mode = 'fail';
    const failed = await quietApp.request.get('/healthz');
    mode = 'ok';
    expect(failed.status).toBe(500);
    const lines = quiet.map((line) => JSON.parse(line));
    const id = failed.headers['x-request-id'];
    expect(lines.map((line) => line.msg)).toEqual(['500 Internal Server Error', 'GET /healthz 500']);
    expect(lines.every((line) => line.req?.id === id && line.level === 50)).toBe(true);
    expect(lines[1]).toMatchObject({
      res: { statusCode: 500 },
      err: { message: 'failed with status code 500' },
    });
    expect(typeof lines[1].responseTime).toBe('number');
  });
});
