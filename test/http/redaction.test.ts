import { parse } from 'node:querystring';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pino from 'pino';
import { signAccessToken } from '../../src/domain/crypto/tokens.ts';
import { REDACTED, redactUrl } from '../../src/http/logging.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/*
 * Logged URLs are redacted by the name the app's own query parser (node's querystring, express's
 * "simple" parser) reads: whatever spelling a client uses, if the parser sees a secret's name, the
 * log does not see its value.
 */

test.each([
  ['api%4Bey%zz=cms_k1-value', 'apiKey%zz'],
  ['%61pi%4b%65y=cms_k1-value', 'apiKey'],
  ['api+key=cms_k1-value', 'api key'],
  ['access%5Ftoken=eyJ.x.y', 'access_token'],
  ['pass%77ord=Orchid-7-Lantern', 'password'],
])('%s (parsed as %s) is redacted', (query, parsedName) => {
  expect(Object.keys(parse(query))).toEqual([parsedName]);
  const logged = redactUrl(`/api/v1/ping?x=1&${query}`);
  expect(logged).toBe(`/api/v1/ping?x=1&${REDACTED}`);
  expect(logged).not.toContain(query.split('=')[1]);
});

test('names the parser does not read as a secret keep their values', () => {
  expect(redactUrl('/a?%zzapiKey=v&title=apiKey')).toBe('/a?%zzapiKey=v&title=apiKey');
});

/*
 * Secrets in places the service does not read — another header, the Referer, a path segment, a
 * matrix parameter, an unknown query name — are redacted by their shape: anything that looks like
 * one of the service's own keys, an access token (a JWT) or a captcha token, as written or
 * percent-encoded, in every logged URL and header.
 */

const KEY = `cms_${'Ab3-_x9Z'.repeat(5)}Qw7`;
const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
const CAPTCHA = 'v1.eyJpZCI6ImFiYyJ9.c2lnbmF0dXJlX29mX2NhcHRjaGE';

test.each([
  ['a path segment', `/api/v1/users/${KEY}/avatar`, '/api/v1/users/[REDACTED]/avatar'],
  ['a matrix parameter', `/api/v1/ping;apiKey=${KEY}`, '/api/v1/ping;apiKey=[REDACTED]'],
  ['an unknown query name', `/api/v1/ping?key=${KEY}&x=1`, '/api/v1/ping?key=[REDACTED]&x=1'],
  ['a glued segment', `/api/v1/ping/x${KEY}`, '/api/v1/ping/[REDACTED]'],
  [
    'a percent-encoded key',
    `/api/v1/ping?k=${encodeURIComponent(KEY).replace('_', '%5F')}`,
    '/api/v1/ping?k=[REDACTED]',
  ],
  ['a JWT in the path', `/api/v1/ping/${JWT}`, '/api/v1/ping/[REDACTED]'],
  ['a JWT after Bearer, form-encoded', `/api/v1/ping?auth=Bearer+${JWT}`, '/api/v1/ping?auth=[REDACTED]'],
  ['a captcha token', `/api/v1/ping?c=${CAPTCHA}`, '/api/v1/ping?c=[REDACTED]'],
])('a secret in %s is redacted by its shape', (_where, url, expected) => {
  expect(redactUrl(url)).toBe(expected);
});

test('URLs without anything shaped like a secret are kept as they are', () => {
  for (const url of [
    '/api/v1/contents/1/2/3',
    '/api/v1/stl/channel?siteId=1&channelName=No+Such%20Channel',
    '/a?cms=1&eyJ=2',
  ]) {
    expect(redactUrl(url)).toBe(url);
  }
});

describe('over HTTP', () => {
  const lines: string[] = [];
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      logger: pino({ level: 'trace' }, { write: (line: string) => lines.push(line) }),
    });
  });
  afterAll(() => app.close());

  test('a real key and token sent where the service does not read them never reach a log', async () => {
    const key = await app.createApiKey(['Contents']);
    const user = await app.db.user.create({
      data: { userName: 'shaped', passwordHash: 'x', passwordSalt: 'x' },
    });
    const token = signAccessToken(
      { id: user.id, kind: 'user', scopes: ['Contents'], version: user.tokenVersion },
      app.config.cmsSecret,
      { expiresIn: 600 },
    ).token;
    lines.length = 0;
    const sends = [
      app.request.get('/api/v1/ping').set('X-Api-Key', key),
      app.request.get('/api/v1/ping').set('Referer', `https://front.example/page?apiKey=${key}&t=${token}`),
      app.request.get('/api/v1/ping').set('X-Forwarded-Prefix', `/${encodeURIComponent(key)}`),
      app.request.get('/api/v1/ping').set('X-Custom', `token=${token}`),
      app.request.get(`/api/v1/ping;apiKey=${key}`),
      app.request.get(`/api/v1/ping?key=${key}`),
      app.request.get(`/api/v1/users/${key}/avatar`),
      app.request.get(`/api/v1/channels/1/${token}`),
    ];
    const statuses = [];
    for (const send of sends) statuses.push((await send).status);
    expect(statuses.every((status) => status < 500)).toBe(true);
    const text = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(sends.length);
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(4));
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split('.')[2]);
    const entries = lines.map(
      (line) => JSON.parse(line) as { req?: { url?: string; headers?: Record<string, unknown> } },
    );
    const headers = entries.map((entry) => entry.req?.headers ?? {});
    expect(headers.some((h) => h['x-api-key'] === REDACTED)).toBe(true);
    expect(
      headers.some((h) => String(h.referer).startsWith('https://front.example/page?apiKey=[REDACTED]')),
    ).toBe(true);
    expect(entries.some((entry) => entry.req?.url === '/api/v1/ping;apiKey=[REDACTED]')).toBe(true);
    // Nor an answer that repeats the path.
    const echoed = await app.request.get(`/api/v1/ping;apiKey=${key}`);
    expect(echoed.status).toBe(404);
    expect(echoed.body.detail).toBe('There is no operation at GET /api/v1/ping;apiKey=[REDACTED]');
  });
});
