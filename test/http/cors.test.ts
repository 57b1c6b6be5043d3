import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { CORS_ALLOWED_HEADERS, CORS_MAX_AGE_SECONDS } from '../../src/http/cors.ts';
import { DEFAULT_SERVER_LIMITS } from '../../src/http/server.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { type Listening, listen } from '../support/server.ts';

/*
 * Browsers as clients (docs/api/cors-and-query-strings.md): CORS is off unless CORS_ORIGIN names
 * origins (or `*`); a preflight is answered from the contract; OPTIONS without CORS is a 204 with
 * `Allow`. Then the real thing: a page on another origin, in Debian's Chromium, calls the API.
 */

const FRONT = 'https://front.example';

describe('CORS_ORIGIN', () => {
  test('unset or empty: off; `*`; or a list of origins', () => {
    expect(loadConfig({}).corsOrigin).toBeUndefined();
    expect(loadConfig({ CORS_ORIGIN: '' }).corsOrigin).toBeUndefined();
    expect(loadConfig({ CORS_ORIGIN: '*' }).corsOrigin).toBe('*');
    expect(loadConfig({ CORS_ORIGIN: 'https://a.example, http://localhost:5173' }).corsOrigin).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
  });

  test.each([
    'https://a.example/',
    'a.example',
    'https://a.example/app',
    'ftp://a.example',
    '*,https://a.example',
  ])('%s is refused at start, naming the variable', (value) => {
    expect(() => loadConfig({ CORS_ORIGIN: value })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGIN: value })).toThrow(
      /CORS_ORIGIN must be \* or a comma-separated list of origins/,
    );
  });
});

describe('without CORS', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  test.each([
    ['/api/v1/contents', 'POST, OPTIONS'],
    ['/api/v1/ping', 'GET, HEAD, OPTIONS'],
    ['/api/v1/contents/1/2/3', 'GET, HEAD, OPTIONS'],
    ['/openapi.json', 'GET, HEAD, OPTIONS'],
    ['/docs', 'GET, HEAD, OPTIONS'],
  ])('OPTIONS %s is a 204 with Allow: %s', async (path, allow) => {
    const response = await app.request
      .options(path)
      .set('Origin', FRONT)
      .set('Access-Control-Request-Method', 'POST');
    expect(response.status).toBe(204);
    expect(response.headers.allow).toBe(allow);
    expect(response.text).toBe('');
    expect(Object.keys(response.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  test('OPTIONS on a path without an operation is a 404 problem', async () => {
    const response = await app.request.options('/api/v1/no-such-thing');
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  test('a request with an Origin gets no CORS header', async () => {
    const response = await app.request.get('/api/v1/ping').set('Origin', FRONT);
    expect(response.status).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('with a list of origins', () => {
  let app: TestApp;
  let key: string;
  beforeAll(async () => {
    app = await startTestApp({ config: { corsOrigin: [FRONT, 'http://localhost:5173'] } });
    key = await app.createApiKey(['Contents']);
  });
  afterAll(() => app.close());

  test('a preflight from a listed origin is answered from the contract', async () => {
    const response = await app.request
      .options('/api/v1/contents/1/2/3')
      .set('Origin', FRONT)
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'x-ss-api-key, if-none-match');
    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe(FRONT);
    expect(response.headers['access-control-allow-credentials']).toBe('true');
    expect(response.headers['access-control-allow-methods']).toBe('GET,HEAD,OPTIONS');
    expect(response.headers['access-control-allow-headers']).toBe(CORS_ALLOWED_HEADERS.join(','));
    expect(response.headers['access-control-max-age']).toBe(String(CORS_MAX_AGE_SECONDS));
    expect(response.headers.vary).toMatch(/Origin/);
    expect(response.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  test('a preflight from another origin gets no permission', async () => {
    const response = await app.request
      .options('/api/v1/contents')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers['access-control-allow-methods']).toBe('POST,OPTIONS');
  });

  test('answers, errors included, carry the origin and the headers a page may read', async () => {
    const ok = await app.request.get('/api/v1/ping').set('Origin', FRONT);
    expect(ok.headers['access-control-allow-origin']).toBe(FRONT);
    expect(ok.headers['access-control-expose-headers']).toBe(
      'ETag,Location,Retry-After,RateLimit,RateLimit-Policy,WWW-Authenticate,X-Request-Id',
    );
    const refused = await app.request.post('/api/v1/contents').set('Origin', FRONT).send({ siteId: 1 });
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(FRONT);
    const read = await app.request
      .post('/api/v1/contents')
      .set('Origin', FRONT)
      .set('X-SS-API-KEY', key)
      .send({ siteId: 1 });
    expect(read.status).toBe(404);
    expect(read.headers['access-control-allow-origin']).toBe(FRONT);
    const other = await app.request.get('/api/v1/ping').set('Origin', 'https://evil.example');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('with `*`', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ config: { corsOrigin: '*' } });
  });
  afterAll(() => app.close());

  test('any origin may call, without credentials', async () => {
    const preflight = await app.request
      .options('/api/v1/contents')
      .set('Origin', 'https://anyone.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    const response = await app.request.get('/api/v1/ping').set('Origin', 'https://anyone.example');
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });
});

if (chromiumMissing !== undefined)
  console.warn(`Skipping the browser test of CORS: missing ${chromiumMissing}`);

(chromiumMissing === undefined ? describe : describe.skip)('a page on another origin, in Chromium', () => {
  let app: TestApp;
  let key: string;
  let api: Listening;
  let front: Server;
  let stranger: Server;
  let browser: Browser;

  /** A server of one blank page: an origin of its own (another port). */
  const pageServer = async (): Promise<[Server, string]> => {
    const server = createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end('<!doctype html><title>front</title>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return [server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`];
  };

  beforeAll(async () => {
    let frontOrigin: string;
    [front, frontOrigin] = await pageServer();
    [stranger] = await pageServer();
    app = await startTestApp({ config: { corsOrigin: [frontOrigin] } });
    key = await app.createApiKey(['Contents']);
    api = await listen(app.app, DEFAULT_SERVER_LIMITS, 'localhost');
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    for (const server of [front, stranger]) {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
    await app?.close();
  });

  /** Runs the calls in a page of `origin`; what each fetch gave, or the error it threw. */
  const callFrom = async (origin: string) => {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      return await page.evaluate(
        async ({ base, key }) => {
          const outcome = async (call: () => Promise<Response>) => {
            try {
              const response = await call();
              return {
                status: response.status,
                etag: response.headers.get('ETag'),
                challenge: response.headers.get('WWW-Authenticate'),
                body: await response.text(),
              };
            } catch (error) {
              return { error: String(error) };
            }
          };
          return {
            // X-SS-API-KEY and a JSON body: the browser sends a preflight first.
            list: await outcome(() =>
              fetch(`${base}/api/v1/contents`, {
                method: 'POST',
                headers: { 'X-SS-API-KEY': key, 'Content-Type': 'application/json' },
                body: JSON.stringify({ siteId: 1 }),
              }),
            ),
            anonymous: await outcome(() =>
              fetch(`${base}/api/v1/contents`, {
                method: 'POST',
                headers: { 'Content-Type': 'application/json' },
                body: '{}',
              }),
            ),
            ping: await outcome(() => fetch(`${base}/api/v1/ping`, { headers: { 'X-SS-API-KEY': key } })),
          };
        },
        { base: api.base, key },
      );
    } finally {
      await page.close();
    }
  };

  test('the allowed origin calls the API and reads its answers and exposed headers', async () => {
    const { list, anonymous, ping } = await callFrom(
      `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    );
    expect(list).toMatchObject({ status: 404 });
    expect(JSON.parse((list as { body: string }).body)).toMatchObject({ status: 404 });
    expect(anonymous).toMatchObject({ status: 401, challenge: expect.stringContaining('ApiKey') });
    expect(ping).toMatchObject({ status: 200, etag: expect.stringMatching(/^W\/"/) });
  }, 60_000);

  test('another origin is refused by the browser', async () => {
    const { list, anonymous, ping } = await callFrom(
      `http://127.0.0.1:${(stranger.address() as AddressInfo).port}`,
    );
    for (const outcome of [list, anonymous, ping])
      expect(outcome).toEqual({ error: expect.stringMatching(/TypeError/) });
  }, 60_000);
});
