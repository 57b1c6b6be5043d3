import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Config } from '../../src/config.ts';
import { preferredCoding } from '../../src/http/compression.ts';
import { DOCS_PAGE } from '../../src/http/serviceRoutes.ts';
import { type SecondApp, startSecondApp, type TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { type Listening, listen } from '../support/server.ts';

/*
 * Answers negotiated with Accept-Encoding (src/http/compression.ts): br or gzip at or above the
 * threshold, as they are below it, when the client asks for identity, or when COMPRESSION=false;
 * Vary on every answer that could have been compressed; ETags that stay correct per coding. Both
 * ways a JSON answer is sent are covered: the validated one (development, tests) and the compiled
 * serialisers of production. Raw node:http requests, so the bytes on the wire are what is checked.
 */

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function decoded(response: Raw): string {
  const coding = response.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(response.body).toString('utf8');
  if (coding === 'gzip') return gunzipSync(response.body).toString('utf8');
  return response.body.toString('utf8');
}

let app: TestApp;
let key: string;
const servers: Listening[] = [];
let development: string;
let production: string;
let off: string;

const seconds: SecondApp[] = [];

/** Another app over the same database with these settings, listening on a free port. */
async function serve(config: Partial<Config>): Promise<Listening> {
  const second = await startSecondApp(app, { config });
  seconds.push(second);
  return listen(second.app);
}

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents']));
  for (const config of [{}, { nodeEnv: 'production' as const }, { compressMinBytes: undefined }]) {
    servers.push(await serve(config));
  }
  [development, production, off] = servers.map((server) => server.base) as [string, string, string];
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  for (const second of seconds) await second.close();
  await app?.close();
});

const list = (base: string, acceptEncoding?: string, extra: Record<string, string> = {}) =>
  raw(
    base,
    'POST',
    '/api/v1/contents',
    {
      'Content-Type': 'application/json',
      'X-SS-API-KEY': key,
      ...(acceptEncoding === undefined ? {} : { 'Accept-Encoding': acceptEncoding }),
      ...extra,
    },
    JSON.stringify({ siteId: 1, perPage: 50 }),
  );

describe.each([
  ['validated (development)', () => development],
  ['compiled serialisers (production)', () => production],
])('a list, %s', (_name, base) => {
  let plain: Raw;
  beforeAll(async () => {
    plain = await list(base(), 'identity');
  });

  test('is above the threshold uncompressed, with Vary, when the client asks for identity', () => {
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThanOrEqual(1024);
    expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
    expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
  });

  test.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
  ])('Accept-Encoding: %s is answered with %s, the same JSON in fewer bytes', async (accept, coding) => {
    const response = await list(base(), accept);
    expect(response.status).toBe(200);
    expect(response.headers['content-encoding']).toBe(coding);
    expect(response.headers.vary).toMatch(/Accept-Encoding/i);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(response.headers['content-length'])).toBe(response.body.length);
    expect(response.body.length).toBeLessThan(plain.body.length);
    expect(JSON.parse(decoded(response))).toEqual(JSON.parse(plain.body.toString('utf8')));
  });

  test('without Accept-Encoding, or with only unknown codings, the answer goes as it is', async () => {
    for (const accept of [undefined, 'compress, deflate;q=0.5']) {
      const response = await list(base(), accept);
      expect(response.headers['content-encoding']).toBeUndefined();
      expect(response.body.equals(plain.body)).toBe(true);
      expect(response.headers.vary).toMatch(/Accept-Encoding/i);
    }
  });

  test('the weak ETag of the text is the same for every coding', async () => {
    expect(plain.headers.etag).toMatch(/^W\//);
    for (const accept of ['br', 'gzip'])
      expect((await list(base(), accept)).headers.etag).toBe(plain.headers.etag);
  });

  test('an answer below the threshold is never compressed and does not vary', async () => {
    const response = await raw(base(), 'GET', '/api/v1/contents/1/1/999999', {
      'X-SS-API-KEY': key,
      'Accept-Encoding': 'br',
    });
    expect(response.status).toBe(404);
    expect(response.body.length).toBeLessThan(1024);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers.vary ?? '').not.toMatch(/Accept-Encoding/i);
    expect(JSON.parse(response.body.toString('utf8')).status).toBe(404);
  });
});

test('a lower threshold compresses smaller answers (problems included)', async () => {
  const low = await serve({ compressMinBytes: 0 });
  try {
    const response = await raw(low.base, 'GET', '/api/v1/contents/1/1/999999', {
      'X-SS-API-KEY': key,
      'Accept-Encoding': 'gzip',
    });
    expect(response.status).toBe(404);
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(decoded(response)).status).toBe(404);
  } finally {
    await low.close();
  }
});

test.each([
  ['development', {}],
  ['production', { nodeEnv: 'production' as const }],
])(
  '%s: a compressed GET keeps the weak ETag of its text and revalidates with it (304, no body); HEAD sends the headers alone',
  async (_name, config) => {
    const low = await serve({ ...config, compressMinBytes: 0 });
    try {
      // A list: its ETag is the weak one of its text (a record's own strong ETag is its version's).
      const path = '/api/v1/contents/1/recycle';
      const headers = { 'X-SS-API-KEY': key };
      const plain = await raw(low.base, 'GET', path, { ...headers, 'Accept-Encoding': 'identity' });
      const br = await raw(low.base, 'GET', path, { ...headers, 'Accept-Encoding': 'br' });
      expect(br.status).toBe(200);
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.etag).toMatch(/^W\//);
      expect(br.headers.etag).toBe(plain.headers.etag);
      expect(decoded(br)).toBe(plain.body.toString('utf8'));
      const again = await raw(low.base, 'GET', path, {
        ...headers,
        'Accept-Encoding': 'br',
        'If-None-Match': String(br.headers.etag),
      });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
      expect(again.headers['content-encoding']).toBeUndefined();
      const head = await raw(low.base, 'HEAD', '/openapi.json', { 'Accept-Encoding': 'gzip' });
      expect(head.status).toBe(200);
      expect(head.headers['content-encoding']).toBe('gzip');
      expect(head.body.length).toBe(0);
    } finally {
      await low.close();
    }
  },
);

test('COMPRESSION=false: nothing is compressed and nothing varies', async () => {
  for (const path of ['/openapi.json']) {
    const response = await raw(off, 'GET', path, { 'Accept-Encoding': 'br, gzip' });
    expect(response.status).toBe(200);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers.vary ?? '').not.toMatch(/Accept-Encoding/i);
  }
  const response = await list(off, 'br, gzip');
  expect(response.status).toBe(200);
  expect(response.headers['content-encoding']).toBeUndefined();
  expect(response.headers.vary ?? '').not.toMatch(/Accept-Encoding/i);
});

describe('the contract and the docs page', () => {
  test('the served contract names its server relatively, whatever host and port serve it', async () => {
    for (const accept of ['identity', 'gzip', 'br']) {
      const json = await raw(development, 'GET', '/openapi.json', { 'Accept-Encoding': accept });
      expect(json.status).toBe(200);
      expect(json.headers['content-encoding']).toBe(accept === 'identity' ? undefined : accept);
      expect(json.headers.vary).toMatch(/Accept-Encoding/i);
      const document = JSON.parse(decoded(json)) as { servers: { url: string }[] };
      expect(document.servers.map((server) => server.url)).toEqual(['/']);
    }
    const yaml = await raw(development, 'GET', '/openapi.yaml', { 'Accept-Encoding': 'br' });
    expect(yaml.headers['content-encoding']).toBe('br');
    expect(yaml.headers['content-type']).toBe('application/yaml; charset=utf-8');
    expect(decoded(yaml)).toContain('servers:\n  - url: /\n');
    expect(decoded(yaml)).not.toContain('localhost');
  });

  const built = existsSync(DOCS_PAGE) && existsSync(`${DOCS_PAGE}.br`) && existsSync(`${DOCS_PAGE}.gz`);
  (built ? test : test.skip)(
    '/docs is sent as the build compressed it, with its policy and Vary',
    async () => {
      for (const [accept, file] of [
        ['br', `${DOCS_PAGE}.br`],
        ['gzip', `${DOCS_PAGE}.gz`],
        ['identity', DOCS_PAGE],
      ] as const) {
        const response = await raw(development, 'GET', '/docs', { 'Accept-Encoding': accept });
        expect(response.status).toBe(200);
        expect(response.headers['content-encoding']).toBe(accept === 'identity' ? undefined : accept);
        expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(response.headers['content-security-policy']).toContain("default-src 'none'");
        expect(response.headers['cache-control']).toBe('no-cache');
        expect(response.headers.vary).toMatch(/Accept-Encoding/i);
        expect(response.body.equals(readFileSync(file))).toBe(true);
      }
      const etag = (await raw(development, 'GET', '/docs', { 'Accept-Encoding': 'br' })).headers.etag;
      const again = await raw(development, 'GET', '/docs', {
        'Accept-Encoding': 'br',
        'If-None-Match': String(etag),
      });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
      const page = readFileSync(DOCS_PAGE, 'utf8');
      expect(page).not.toContain('localhost:3000');
    },
  );
});

test.each([
  ['br', 'br'],
  ['gzip, deflate, br, zstd', 'br'],
  ['GZIP', 'gzip'],
  ['x-gzip', 'gzip'],
  ['*', 'br'],
  ['*;q=0.5, br;q=0', 'gzip'],
  ['br;q=0.2, gzip;q=0.8', 'gzip'],
  ['identity;q=1, br;q=0.5', undefined],
  ['br;q=0, gzip;q=0', undefined],
  ['deflate', undefined],
  ['', undefined],
])('Accept-Encoding: %p prefers %p', (header, coding) => {
  expect(preferredCoding(header)).toBe(coding);
});
