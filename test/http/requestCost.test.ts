import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  DRAIN_LIMIT_BYTES,
  JSON_BODY_LIMIT_BYTES,
  jsonShape,
  MAX_JSON_DEPTH,
  MAX_JSON_ITEMS,
  PUBLIC_BODY_LIMIT_BYTES,
} from '../../src/http/bodies.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { type Listening, listen, SHORT_LIMITS } from '../support/server.ts';

/*
 * What a request costs before it is let in (docs/security/requests.md): the body of a request on a
 * protected operation is read only after its credentials have been accepted, so a request without
 * them is answered from its headers alone — shown here by answering before the body has even been
 * sent. Whatever is read is bounded (size, depth, number of items) before anything walks it, for
 * public operations and authenticated callers alike; and a connection whose body was left unread
 * is either drained (a short body, so a keep-alive client keeps its connection) or closed.
 */

let app: TestApp;
let key: string;
let listening: Listening;
let base: string;
let port: number;

beforeAll(async () => {
  app = await startTestApp();
  key = await app.createApiKey(['Contents']);
  listening = await listen(app.app, SHORT_LIMITS);
  ({ port, base } = listening);
});
afterAll(async () => {
  await listening.close();
  await app.close();
});

/** A JSON object of `count` members: the shape of the hostile bodies of issue 15. */
const manyKeys = (count: number) => `{${Array.from({ length: count }, (_, n) => `"k${n}":${n}`).join(',')}}`;

const head = (method: string, path: string, headers: Record<string, string>) =>
  [
    `${method} ${path} HTTP/1.1\r\nHost: test\r\n`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`),
    '\r\n',
  ].join('');

interface Answer {
  status: number;
  head: string;
  body: string;
}

/**
 * A raw connection that reads answers one at a time (by Content-Length) and tells whether the
 * server closed it.
 */
class Connection {
  private readonly socket: Socket;
  private buffer = Buffer.alloc(0);
  closed = false;
  private waiter: (() => void) | undefined;

  constructor() {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (data) => {
      this.buffer = Buffer.concat([this.buffer, data]);
      this.waiter?.();
    });
    const ended = () => {
      this.closed = true;
      this.waiter?.();
    };
    this.socket.on('close', ended);
    this.socket.on('end', ended);
    // A reset after the answer (a body the server stopped reading) is a close like any other.
    this.socket.on('error', ended);
  }

  write(chunk: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(chunk);
  }

  /** The next complete answer on the connection. */
  async answer(): Promise<Answer> {
    for (;;) {
      const text = this.buffer.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end !== -1) {
        const headText = text.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(headText)?.[1] ?? 0);
        if (this.buffer.length >= end + 4 + length) {
          const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
          this.buffer = this.buffer.subarray(end + 4 + length);
          return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headText)?.[1]), head: headText, body };
        }
      }
      if (this.closed) throw new Error(`closed before a complete answer: ${text.slice(0, 200)}`);
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
      this.waiter = undefined;
    }
  }

  /** Resolves once the server has closed the connection. */
  async whenClosed(): Promise<void> {
    while (!this.closed) {
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
      this.waiter = undefined;
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

const json = { 'Content-Type': 'application/json' };

describe('a protected operation answers a request without credentials from its headers', () => {
  test.each([
    ['no credentials', {}],
    ['a made-up key', { 'X-SS-API-KEY': 'cms_made-up-key-that-does-not-exist' }],
    ['a malformed bearer token', { Authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.forged' }],
  ])('%s: 401 before the body has been sent, and the connection closed', async (_name, credentials) => {
    const body = manyKeys(300_000);
    expect(body.length).toBeLessThan(JSON_BODY_LIMIT_BYTES);
    const connection = new Connection();
    try {
      // Headers and a first kilobyte only: the rest of the body is never sent.
      connection.write(
        head('POST', '/api/v1/contents', {
          ...credentials,
          ...json,
          'Content-Length': String(Buffer.byteLength(body)),
        }),
      );
      connection.write(body.slice(0, 1024));
      const answer = await connection.answer();
      expect(answer.status).toBe(401);
      expect(answer.head).toMatch(/^www-authenticate: /im);
      expect(answer.head).toMatch(/^connection: close/im);
      expect(JSON.parse(answer.body)).toMatchObject({ status: 401 });
      await connection.whenClosed();
    } finally {
      connection.destroy();
    }
  });

  test('with a valid key, the same unfinished body is waited for (and times out): it is read only then', async () => {
    const connection = new Connection();
    try {
      connection.write(
        head('POST', '/api/v1/contents', { 'X-SS-API-KEY': key, ...json, 'Content-Length': '100000' }),
      );
      connection.write('{"siteId":');
      const answer = await connection.answer();
      expect(answer.status).toBe(408);
    } finally {
      connection.destroy();
    }
  });

  test('a chunked body without credentials: 401 at once, and the connection closed', async () => {
    const connection = new Connection();
    try {
      connection.write(head('POST', '/api/v1/contents', { ...json, 'Transfer-Encoding': 'chunked' }));
      connection.write('400\r\n');
      connection.write(`{${'"a":1,'.repeat(170)}`.padEnd(1024, ' '));
      const answer = await connection.answer();
      expect(answer.status).toBe(401);
      expect(answer.head).toMatch(/^connection: close/im);
      await connection.whenClosed();
    } finally {
      connection.destroy();
    }
  });

  test(`a short body (up to ${DRAIN_LIMIT_BYTES} bytes) is discarded unread: the connection serves the next request`, async () => {
    const body = manyKeys(1000);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(DRAIN_LIMIT_BYTES);
    const connection = new Connection();
    try {
      connection.write(
        head('POST', '/api/v1/contents', { ...json, 'Content-Length': String(Buffer.byteLength(body)) }),
      );
      connection.write(body);
      const refused = await connection.answer();
      expect(refused.status).toBe(401);
      expect(refused.head).not.toMatch(/^connection: close/im);
      connection.write(head('GET', '/api/v1/ping', {}));
      const next = await connection.answer();
      expect(next.status).toBe(200);
      expect(connection.closed).toBe(false);
    } finally {
      connection.destroy();
    }
  });

  test('a keep-alive fetch client gets its 401 for a large body, and its next request is answered', async () => {
    const body = manyKeys(200_000);
    const refused = await fetch(`${base}/api/v1/contents`, { method: 'POST', headers: json, body });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ status: 401 });
    const next = await fetch(`${base}/api/v1/contents`, {
      method: 'POST',
      headers: { ...json, 'X-SS-API-KEY': key },
      body: JSON.stringify({ siteId: 1 }),
    });
    // No site 1 in this database: the body was read and used.
    expect(next.status).toBe(404);
  });

  test('a rate-limited address is refused before its body is read too', async () => {
    const limited = await startTestApp({ config: { rateLimitPerMinute: 1 } });
    const limitedServer = await listen(limited.app, SHORT_LIMITS);
    try {
      await fetch(`${limitedServer.base}/api/v1/contents`, { method: 'POST' });
      const socket = connect(limitedServer.port, '127.0.0.1');
      const received = await new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (data) => {
          text += data.toString('latin1');
          if (text.includes('\r\n\r\n')) resolve(text);
        });
        socket.write(head('POST', '/api/v1/contents', { ...json, 'Content-Length': '1000000' }));
        socket.write('{');
      });
      socket.destroy();
      expect(received).toMatch(/^HTTP\/1\.1 429/);
      expect(received).toMatch(/^connection: close/im);
    } finally {
      await limitedServer.close();
      await limited.close();
    }
  });
});

describe('every body is bounded before anything walks it', () => {
  test('jsonShape counts members and elements outside strings, and stops beyond its limits', () => {
    expect(jsonShape('{"a":[1,2,{"b":"[,],{"}],"c":[]}')).toEqual({ depth: 3, items: 7 });
    expect(jsonShape('"a,b,[c]"')).toEqual({ depth: 0, items: 0 });
    expect(jsonShape(manyKeys(50_000), { depth: MAX_JSON_DEPTH, items: MAX_JSON_ITEMS }).items).toBe(
      MAX_JSON_ITEMS + 1,
    );
  });

  test(`an authenticated body of more than ${MAX_JSON_ITEMS} items is a 400`, async () => {
    const response = await fetch(`${base}/api/v1/contents`, {
      method: 'POST',
      headers: { ...json, 'X-SS-API-KEY': key },
      body: manyKeys(MAX_JSON_ITEMS + 1),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({
      type: 'https://cms.example/problems/malformed-json',
      detail: `The request body holds more than ${MAX_JSON_ITEMS} items (object members and array elements)`,
    });
  });

  test('an authenticated body with a long array is bounded the same way', async () => {
    const response = await fetch(`${base}/api/v1/contents`, {
      method: 'POST',
      headers: { ...json, 'X-SS-API-KEY': key },
      body: JSON.stringify({ siteId: 1, wheres: Array.from({ length: MAX_JSON_ITEMS }, () => 0) }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { type: string }).type).toBe(
      'https://cms.example/problems/malformed-json',
    );
  });

  test(`a public operation's body above ${PUBLIC_BODY_LIMIT_BYTES} bytes is a 413, unread`, async () => {
    const body = JSON.stringify({ account: 'someone', password: 'x'.repeat(PUBLIC_BODY_LIMIT_BYTES) });
    const response = await fetch(`${base}/api/v1/users/actions/login`, {
      method: 'POST',
      headers: json,
      body,
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({
      detail: `The request body is ${Buffer.byteLength(body)} bytes; the service accepts at most ${PUBLIC_BODY_LIMIT_BYTES}`,
    });
  });

  test('a public operation with too many items, or too deep, is a 400', async () => {
    const wide = await fetch(`${base}/api/v1/administrators/actions/login`, {
      method: 'POST',
      headers: json,
      body: `[${'0,'.repeat(MAX_JSON_ITEMS)}0]`,
    });
    expect(wide.status).toBe(400);
    expect(((await wide.json()) as { detail: string }).detail).toMatch(/more than 10000 items/);
    const deep = await fetch(`${base}/api/v1/captcha/login/actions/check`, {
      method: 'POST',
      headers: json,
      body: `${'['.repeat(40)}${']'.repeat(40)}`,
    });
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as { detail: string }).detail).toBe(
      `The request body is nested more than ${MAX_JSON_DEPTH} levels deep`,
    );
  });

  test('an operation that takes no body ignores one, whatever it holds', async () => {
    const connection = new Connection();
    try {
      const nested = `${'['.repeat(1900)}${']'.repeat(1900)}`;
      connection.write(head('GET', '/api/v1/ping', { ...json, 'Content-Length': String(nested.length) }));
      connection.write(nested);
      const answer = await connection.answer();
      expect(answer.status).toBe(200);
      connection.write(head('GET', '/api/v1/ping', {}));
      expect((await connection.answer()).status).toBe(200);
    } finally {
      connection.destroy();
    }
  });
});
