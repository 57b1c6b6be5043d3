import { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { JSON_BODY_LIMIT_BYTES, jsonDepth, MAX_JSON_DEPTH } from '../../src/http/bodies.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { type Listening, listen } from '../support/server.ts';

/*
 * Requests that used to crash a request or hold a connection: bodies nested thousands deep, bodies
 * without a JSON media type, declared lengths far above the limit, slow or stalled clients, and
 * what Node itself refuses. Raw sockets, because a well-behaved HTTP client cannot send these.
 */

let app: TestApp;
let key: string;
let listening: Listening;
let port: number;

/** Short limits, so that a stalled client is cut off within a test's patience. */
const LIMITS = {
  headersTimeoutMs: 400,
  requestTimeoutMs: 800,
  keepAliveTimeoutMs: 500,
  checkIntervalMs: 100,
};

beforeAll(async () => {
  app = await startTestApp();
  key = await app.createApiKey(['Contents']);
  listening = await listen(app.app, LIMITS);
  port = listening.port;
});
afterAll(async () => {
  await listening.close();
  await app.close();
});

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
  /** The server closed the connection. */
  closed: boolean;
}

/** Sends `chunks` (the last one left open unless `end`), and reads until the server closes or answers in full. */
function raw(chunks: (string | Buffer)[], options: { end?: boolean } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const finish = (closed: boolean) => {
      const [head = '', body = ''] = received.split('\r\n\r\n', 2);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      socket.destroy();
      resolve({ status, headers: head, body, closed });
    };
    socket.on('data', (data) => {
      received += data.toString('latin1');
      const length = /content-length: (\d+)/i.exec(received)?.[1];
      const [, body] = received.split('\r\n\r\n', 2);
      if (length !== undefined && body !== undefined && Buffer.byteLength(body) >= Number(length)) {
        // A complete answer: the connection must also close when the server said so.
        socket.once('close', () => finish(true));
        if (!/connection: close/i.test(received)) finish(false);
      }
    });
    socket.on('close', () => finish(true));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') finish(true);
      else reject(error);
    });
    socket.on('connect', () => {
      for (const chunk of chunks) socket.write(chunk);
      if (options.end) socket.end();
    });
  });
}

const post = (path: string, headers: Record<string, string>, body = '') =>
  [
    `POST ${path} HTTP/1.1\r\nHost: test\r\n`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`),
    '\r\n',
    body,
  ].join('');

function expectProblem(answer: RawAnswer, status: number, type: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers).toMatch(/content-type: application\/problem\+json/i);
  expect(JSON.parse(answer.body)).toMatchObject({ status, type: `https://cms.example/problems/${type}` });
}

describe('deeply nested JSON', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  test('jsonDepth counts brackets outside strings only', () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3);
    expect(jsonDepth('"\\"[[["')).toBe(0);
    expect(jsonDepth(nested(1900), MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
  });

  test.each([
    ['a list, with a key', '/api/v1/contents', 'key'],
    ['a login (public)', '/api/v1/users/actions/login', undefined],
  ])('a body nested 1,900 deep to %s is a 400 problem, not a crash', async (_name, path, withKey) => {
    const body = nested(1900);
    const headers: Record<string, string> = withKey === undefined ? {} : { 'X-SS-API-KEY': key };
    const answer = await raw([
      post(
        path,
        { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
        body,
      ),
    ]);
    expectProblem(answer, 400, 'malformed-json');
    expect(JSON.parse(answer.body).detail).toBe(
      `The request body is nested more than ${MAX_JSON_DEPTH} levels deep`,
    );
  });

  test.each([
    ['a list with a made-up key', '/api/v1/contents', { 'X-SS-API-KEY': 'x' }, 401],
    ['a list without a key', '/api/v1/contents', {}, 401],
    ['a path without an operation', '/healthz', {}, 405],
  ])(
    'a body nested 1,900 deep to %s is answered from its headers (%s: %s)',
    async (_name, path, headers, status) => {
      const body = nested(1900);
      const answer = await raw([
        post(
          path,
          { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
          body,
        ),
      ]);
      expect(answer.status).toBe(status);
    },
  );

  test('a body within the depth limit is read as usual', async () => {
    const response = await app.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({ siteId: 1, wheres: [{ column: 'title', value: 'x' }] });
    expect(response.status).toBe(404); // no site 1 in this database: the body was read and used
  });
});

describe('media type', () => {
  test.each([
    ['an update', '/api/v1/contents/1/1/1/actions/update', undefined],
    ['a list', '/api/v1/contents', undefined],
    ['a list sent as text', '/api/v1/contents', 'text/plain'],
  ])('%s with a body but no JSON media type is a 415', async (_name, path, type) => {
    const body = '{"siteId":1}';
    const headers: Record<string, string> = { 'X-SS-API-KEY': key, 'Content-Length': String(body.length) };
    if (type !== undefined) headers['Content-Type'] = type;
    const answer = await raw([post(path, headers, body)]);
    expectProblem(answer, 415, 'unsupported-media-type');
    expect(JSON.parse(answer.body).detail).toBe(
      type === undefined
        ? 'The request has no Content-Type; send the body as application/json'
        : "Content-Type 'text/plain' is not supported here; send application/json",
    );
  });
});

describe('body size', () => {
  test('a declared 1 GiB body is refused with a 413 at once, after 1 MiB of it, and the connection closed', async () => {
    const answer = await raw([
      post('/api/v1/contents', {
        'X-SS-API-KEY': key,
        'Content-Type': 'application/json',
        'Content-Length': String(1024 ** 3),
      }),
      Buffer.alloc(1024 * 1024, 0x20),
    ]);
    expectProblem(answer, 413, 'payload-too-large');
    expect(JSON.parse(answer.body).detail).toBe(
      `The request body is ${1024 ** 3} bytes; the service accepts at most ${JSON_BODY_LIMIT_BYTES}`,
    );
    expect(answer.closed).toBe(true);
  });
});

describe('slow clients', () => {
  test('headers that never finish: a 408 problem, then the connection is closed', async () => {
    const answer = await raw(['POST /api/v1/contents HTTP/1.1\r\nHost: test\r\nX-Slow: ']);
    expectProblem(answer, 408, 'request-timeout');
    expect(answer.closed).toBe(true);
  });

  test('a body that trickles in: a 408 problem, then the connection is closed', async () => {
    const answer = await raw([
      post('/api/v1/contents', {
        'X-SS-API-KEY': key,
        'Content-Type': 'application/json',
        'Content-Length': '100',
      }),
      '{',
    ]);
    expectProblem(answer, 408, 'request-timeout');
    expect(answer.closed).toBe(true);
  });
});

describe("Node's own refusals are problems too", () => {
  test('malformed HTTP: 400', async () => {
    const answer = await raw(['HELLO THERE\r\n\r\n']);
    expectProblem(answer, 400, 'bad-request');
    expect(answer.closed).toBe(true);
  });

  test('oversized headers: 431', async () => {
    const answer = await raw([
      `GET /api/v1/ping HTTP/1.1\r\nHost: test\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ]);
    expectProblem(answer, 431, 'headers-too-large');
  });

  test('an oversized URL: 431', async () => {
    const answer = await raw([`GET /api/v1/ping?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: test\r\n\r\n`]);
    expectProblem(answer, 431, 'headers-too-large');
  });
});

describe('integer parameters are plain digits', () => {
  const get = (path: string) => app.request.get(path).set('X-SS-API-KEY', key);

  test.each(['Infinity', '-Infinity', '1e309', '1e400', '1e1', '0x0A', '%2010', '10.0', '+-1', '1_0'])(
    'path siteId %s is a 400 naming it',
    async (value) => {
      const response = await get(`/api/v1/contents/${value}/1/1`);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body.errors).toEqual([
        { path: '/path/siteId', message: 'must be an integer written in plain digits' },
      ]);
    },
  );

  test.each([
    '/api/v1/contents/%/1/1',
    '/api/v1/captcha/%25%/actions/check',
    '/api/v1/users/%E0%A4%A/avatar',
  ])('a path that cannot be percent-decoded (%s) is a 400 problem', async (path) => {
    const response = await app.request.post(path).set('X-SS-API-KEY', key).send({ captcha: 'x' });
    expect(response.status).toBe(400);
    expect(response.body.detail).toBe('The path holds invalid percent-encoding');
  });

  test('digits beyond 2^53 are out of range, not rounded', async () => {
    const response = await get(`/api/v1/contents/1/1/${'9'.repeat(400)}`);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ path: '/path/id', message: 'must be an integer within int32' }]);
  });

  test('query integers too', async () => {
    const stl = await app.createApiKey(['STL']);
    const response = await app.request.get('/api/v1/stl/site?siteId=1e1').set('X-SS-API-KEY', stl);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      { path: '/query/siteId', message: 'must be an integer written in plain digits' },
    ]);
  });

  test.each(['10', '+10', '010'])('%s is read as 10 (and reaches the handler)', async (value) => {
    const response = await get(`/api/v1/contents/${value}/1/1`);
    expect(response.status).toBe(404);
    expect(response.body.detail).toMatch(/10/);
  });
});

test("the server's requests and responses are born with the app's prototypes, and are node's still", async () => {
  // Seen before the app's listener, that is before express sets their prototypes (to the same ones).
  const seen: unknown[][] = [];
  const record = (req: IncomingMessage, res: ServerResponse) => {
    seen.push([
      Object.getPrototypeOf(req) === app.app.request,
      Object.getPrototypeOf(res) === app.app.response,
      req instanceof IncomingMessage,
      res instanceof ServerResponse,
    ]);
  };
  listening.server.prependListener('request', record);
  try {
    const answer = await fetch(`http://127.0.0.1:${port}/api/v1/ping`);
    expect([answer.status, await answer.text()]).toEqual([200, 'pong']);
    const content = await fetch(`http://127.0.0.1:${port}/api/v1/contents/1/1/1`, {
      headers: { 'X-SS-API-KEY': key },
    });
    // The fixture is not loaded: the content is not there, and the answer says so as a problem.
    expect(content.status).toBe(404);
    expect(content.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  } finally {
    listening.server.off('request', record);
  }
  expect(seen).toEqual([
    [true, true, true, true],
    [true, true, true, true],
  ]);
});
