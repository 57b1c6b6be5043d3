import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pino from 'pino';
import { PUBLIC_BODY_LIMIT_BYTES } from '../../src/http/bodies.ts';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { type Listening, listen, SHORT_LIMITS } from '../support/server.ts';

/*
 * How a JSON body is read (src/http/bodies.ts): UTF-8 JSON sent as is by the service's own reader,
 * every other body by express.json, with the answers body-parser has always given — strict JSON
 * (an object or an array), a UTF-8 BOM dropped, an empty body taken as `{}`, a body past its limit
 * a 413 on a closed connection, a request cut short a 400. Through HTTP on the fixture catalogue,
 * whose list filtered by title shows what the body said; raw sockets where a client cannot send it.
 */

let app: TestApp;
let key: string;
let listening: Listening;
/** Every line the app logs. */
const lines: string[] = [];

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents'], {
    logger: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
  }));
  listening = await listen(app.app, SHORT_LIMITS);
});
afterAll(async () => {
  keepAlive.destroy();
  await listening.close();
  await app.close();
});

/** What clients do: one keep-alive agent, whose connections later requests reuse. */
const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** The fixture's content 2, by its title: a body read right lists [2]. */
const BETA = '{"siteId":1,"wheres":[{"column":"title","value":"Beta program"}]}';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Sent on a connection an earlier request had used. */
  reused: boolean;
}

/** One request with exactly these bytes (chunked when `body` is a list of chunks), on the keep-alive agent. */
function send(
  path: string,
  headers: Record<string, string>,
  body: string | Buffer | (string | Buffer)[],
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: '127.0.0.1', port: listening.port, method: 'POST', path, headers, agent: keepAlive },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(parts).toString('utf8'),
            reused: outgoing.reusedSocket,
          }),
        );
      },
    );
    outgoing.on('error', reject);
    if (Array.isArray(body)) {
      for (const chunk of body) outgoing.write(chunk);
      outgoing.end();
    } else {
      outgoing.setHeader('Content-Length', Buffer.byteLength(body));
      outgoing.end(body);
    }
  });
}

const listWith = (type: string, body: string | Buffer | (string | Buffer)[], headers = {}) =>
  send('/api/v1/contents', { 'X-SS-API-KEY': key, 'Content-Type': type, ...headers }, body);

function listedIds(answer: Answer): number[] {
  expect(answer.status).toBe(200);
  return (JSON.parse(answer.text) as { contents: { id: number }[] }).contents.map((content) => content.id);
}

function expectNotJson(answer: Answer) {
  expect(answer.status).toBe(400);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(JSON.parse(answer.text)).toMatchObject({
    type: 'https://cms.example/problems/malformed-json',
    status: 400,
    detail: 'The request body is not valid JSON',
  });
}

interface RawAnswer {
  /** Every byte the server sent, as latin1 text. */
  text: string;
  /** The server closed the connection. */
  closed: boolean;
}

/** Sends `chunks` on a raw connection, and reads until the server closes it or has been quiet for 500 ms. */
function raw(chunks: (string | Buffer)[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(listening.port, '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed });
    };
    const quiet = () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(false), 500);
    };
    socket.on('data', (data) => {
      text += data.toString('latin1');
      quiet();
    });
    socket.on('close', () => finish(true));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') finish(true);
      else reject(error);
    });
    socket.on('connect', () => {
      for (const chunk of chunks) socket.write(chunk);
      quiet();
    });
  });
}

const head = (path: string, headers: Record<string, string>) =>
  [
    `POST ${path} HTTP/1.1\r\nHost: test\r\n`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`),
    '\r\n',
  ].join('');

const chunk = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;

/** The statuses of the answers in `text`, in order. */
const statuses = (text: string) =>
  [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));

/** The status the request log gave the request with this id, once logged. */
async function loggedStatus(requestId: string): Promise<number | undefined> {
  for (let wait = 0; wait < 50; wait++) {
    const entry = lines
      .map((line) => JSON.parse(line) as { req?: { id?: string }; res?: { statusCode?: number } })
      .find((line) => line.req?.id === requestId && line.res !== undefined);
    if (entry !== undefined) return entry.res?.statusCode;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return undefined;
}

describe('what a JSON body may look like', () => {
  test.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json ; charset="utf-8"',
    'APPLICATION/JSON',
    // Not read by the service's own reader, but by express.json: the same.
    'application/json; charset=utf-8; profile=x',
    'application/json;',
  ])('%s is read', async (type) => {
    expect(listedIds(await listWith(type, BETA))).toEqual([2]);
  });

  test.each(['application/vnd.x+json; charset=UTF-8', 'application/merge-patch+json'])(
    '%s is read as JSON, then refused by the contract (application/json only)',
    async (type) => {
      expectNotJson(await listWith(type, '"x"'));
      const answer = await listWith(type, BETA);
      expect(answer.status).toBe(415);
      expect(JSON.parse(answer.text)).toMatchObject({
        type: 'https://cms.example/problems/unsupported-media-type',
        detail: `Content-Type '${type.split(';')[0]}' is not supported here; send application/json`,
      });
    },
  );

  test.each(['application/jsonx', 'application/+json', 'application/x-json', 'text/json'])(
    '%s, not a JSON media type, is a 415 before the body is read',
    async (type) => {
      const answer = await listWith(type, BETA);
      expect(answer.status).toBe(415);
      expect(JSON.parse(answer.text)).toMatchObject({
        detail: `Content-Type '${type}' is not supported here; send application/json`,
      });
    },
  );

  test('whitespace before the object, and a UTF-8 BOM, are skipped', async () => {
    expect(listedIds(await listWith('application/json', ` \t\r\n${BETA}`))).toEqual([2]);
    expect(listedIds(await listWith('application/json', `\ufeff${BETA}`))).toEqual([2]);
    expect(listedIds(await listWith('application/json', `\ufeff \n${BETA}\n`))).toEqual([2]);
  });

  test('a body in UTF-16 (with or without its BOM) or gzip-compressed is read as before', async () => {
    for (const text of [BETA, `\ufeff${BETA}`]) {
      const answer = await listWith('application/json; charset=utf-16le', Buffer.from(text, 'utf16le'));
      expect(listedIds(answer)).toEqual([2]);
    }
    const gzipped = await listWith('application/json', gzipSync(BETA), { 'Content-Encoding': 'gzip' });
    expect(listedIds(gzipped)).toEqual([2]);
    const identity = await listWith('application/json', BETA, { 'Content-Encoding': 'Identity' });
    expect(listedIds(identity)).toEqual([2]);
  });

  test('a charset other than UTF-8 or UTF-16 is still a 415', async () => {
    for (const type of ['application/json; charset=utf8', 'application/json; charset=latin1']) {
      const answer = await listWith(type, BETA);
      expect(answer.status).toBe(415);
      expect(JSON.parse(answer.text)).toMatchObject({
        detail: 'The request body uses an unsupported encoding or charset',
      });
    }
  });

  test('invalid UTF-8 becomes replacement characters, as before', async () => {
    const title = Buffer.concat([
      Buffer.from('Odd '),
      Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]),
      Buffer.from(' bytes'),
    ]);
    const body = Buffer.concat([Buffer.from('{"title":"'), title, Buffer.from('"}')]);
    const answer = await send(
      '/api/v1/contents/1/3',
      { 'X-SS-API-KEY': key, 'Content-Type': 'application/json' },
      body,
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).title).toBe('Odd \ufffd\ufffd(\ufffd bytes');
  });

  test('an empty body is taken as {}, as a BOM alone is, whether its length is declared or chunked', async () => {
    const cases: [string, string | Buffer | string[]][] = [
      ['application/json', ''],
      ['application/json', '\ufeff'],
      ['application/json', ['']],
      ['application/json', ['\ufeff']],
      ['application/json; charset=utf-16le', ''],
      ['application/json; charset=utf-16le', Buffer.from('\ufeff', 'utf16le')],
    ];
    for (const [type, body] of cases) {
      const answer = await listWith(type, body);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({
        type: 'https://cms.example/problems/validation',
        errors: [{ path: '/body/siteId', message: "must have required property 'siteId'" }],
      });
    }
  });

  test.each([
    ['a string', '"hunter2"'],
    ['a number', '5'],
    ['null', 'null'],
    ['true', 'true'],
    ['a string after whitespace', ' \n"hunter2"'],
    ['whitespace only', '  \n'],
    ['an object after a form feed (not JSON whitespace)', `\f${BETA}`],
    ['an object after two BOMs', `\ufeff\ufeff${BETA}`],
    ['an unfinished object', '{"siteId":1,"password":"hunter2"'],
    ['an object and more', `${BETA}x`],
  ])('%s is a 400 malformed-json that does not quote the body', async (_name, body) => {
    const answer = await listWith('application/json', body);
    expectNotJson(answer);
    expect(answer.text).not.toContain('hunter2');
  });
});

describe('how much is read', () => {
  test('a chunked body is read to its end', async () => {
    const answer = await listWith('application/json', [
      BETA.slice(0, 10),
      BETA.slice(10, 30),
      BETA.slice(30),
    ]);
    expect(listedIds(answer)).toEqual([2]);
  });

  test(`a chunked body that grows past its limit (${PUBLIC_BODY_LIMIT_BYTES} bytes on a public operation) is a 413, and the connection closed`, async () => {
    const half = 'x'.repeat(PUBLIC_BODY_LIMIT_BYTES / 2);
    const answer = await raw([
      head('/api/v1/users/actions/login', {
        'Content-Type': 'application/json',
        'Transfer-Encoding': 'chunked',
      }),
      chunk(`{"account":"someone","password":"${half}`),
      chunk(half),
      chunk('"}'),
      '0\r\n\r\n',
      // Never answered: the connection closes after the 413.
      'GET /api/v1/ping HTTP/1.1\r\nHost: test\r\n\r\n',
    ]);
    expect(statuses(answer.text)).toEqual([413]);
    expect(answer.text).toMatch(/^connection: close/im);
    expect(answer.text).toContain('"detail":"The request body is too large"');
    expect(answer.closed).toBe(true);
  });

  test('on a keep-alive connection, bodies read in full keep it; a body past its limit closes it, and the next request gets a new one', async () => {
    expect(listedIds(await listWith('application/json', BETA))).toEqual([2]);
    const notJson = await listWith('application/json', ['"not an object"']);
    expectNotJson(notJson);
    expect(notJson.reused).toBe(true);
    const reused = await listWith('application/json', [BETA]);
    expect(listedIds(reused)).toEqual([2]);
    expect(reused.reused).toBe(true);
    const tooLarge = await send('/api/v1/users/actions/login', { 'Content-Type': 'application/json' }, [
      '{"account":"',
      'a'.repeat(PUBLIC_BODY_LIMIT_BYTES),
      '"}',
    ]);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers.connection).toBe('close');
    expect(JSON.parse(tooLarge.text)).toMatchObject({ detail: 'The request body is too large' });
    const after = await listWith('application/json', BETA);
    expect(listedIds(after)).toEqual([2]);
    expect(after.reused).toBe(false);
  });

  test('a chunked body at its limit is read', async () => {
    const login = '{"account":"someone","password":"0123456789abcdef0123456789abcdef"}';
    const body = login.padEnd(PUBLIC_BODY_LIMIT_BYTES, ' ');
    expect(Buffer.byteLength(body)).toBe(PUBLIC_BODY_LIMIT_BYTES);
    const answer = await send('/api/v1/users/actions/login', { 'Content-Type': 'application/json' }, [body]);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.text)).toMatchObject({ type: 'https://cms.example/problems/login-failed' });
  });

  test('a chunked body found not to be JSON keeps the connection, having been read in full', async () => {
    const answer = await raw([
      head('/api/v1/contents', {
        'X-SS-API-KEY': key,
        'Content-Type': 'application/json',
        'Transfer-Encoding': 'chunked',
      }),
      chunk('"not an object"'),
      '0\r\n\r\n',
      'GET /api/v1/ping HTTP/1.1\r\nHost: test\r\n\r\n',
    ]);
    expect(statuses(answer.text)).toEqual([400, 200]);
    expect(answer.text).toContain('"detail":"The request body is not valid JSON"');
    expect(answer.text).not.toMatch(/^connection: close/im);
    expect(answer.closed).toBe(false);
  });

  test('bytes beyond the declared length are the next request', async () => {
    const answer = await raw([
      head('/api/v1/contents', {
        'X-SS-API-KEY': key,
        'Content-Type': 'application/json',
        'Content-Length': String(BETA.length),
      }),
      `${BETA}GET /api/v1/ping HTTP/1.1\r\nHost: test\r\n\r\n`,
    ]);
    expect(statuses(answer.text)).toEqual([200, 200]);
    expect(answer.text).toContain('"title":"Beta program"');
    expect(answer.text).toMatch(/\r\n\r\npong$/);
  });

  /**
   * Sends a list's headers and the start of its body, waits until the body stage is reading it, then
   * half-closes the connection or drops it; resolves with what the server sent back.
   */
  async function cutShort(requestId: string, how: 'end' | 'destroy'): Promise<string> {
    const socket = connect(listening.port, '127.0.0.1');
    let text = '';
    socket.on('data', (data) => {
      text += data.toString('latin1');
    });
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      head('/api/v1/contents', {
        'X-SS-API-KEY': key,
        'Content-Type': 'application/json',
        'Content-Length': '100',
        'X-Request-Id': requestId,
      }),
    );
    socket.write(BETA.slice(0, 20));
    // The credentials' check comes first; then the body stage waits for the other 80 bytes.
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (how === 'end') socket.end();
    else socket.destroy();
    await closed;
    return text;
  }

  test('a body shorter than declared, its connection half-closed: node refuses it, and the request ends as a 400', async () => {
    const answer = await cutShort('short-body-half-closed', 'end');
    expect(statuses(answer)).toEqual([400]);
    expect(answer).toContain('"detail":"The request is not valid HTTP"');
    // The body stage saw the request cut short and answered it (to no one): nothing hangs.
    expect(await loggedStatus('short-body-half-closed')).toBe(400);
  });

  test('a client that goes away in the middle of its body: the request ends as a 400, and the service goes on', async () => {
    expect(await cutShort('client-gone', 'destroy')).toBe('');
    expect(await loggedStatus('client-gone')).toBe(400);
    expect(listedIds(await listWith('application/json', BETA))).toEqual([2]);
  });
});
