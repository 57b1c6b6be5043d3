import type { Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createHttpServer, DEFAULT_SERVER_LIMITS, drainServer } from '../../src/http/server.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/*
 * A server being stopped drains its keep-alive connections (src/http/server.ts, drainServer): a
 * request sent on a connection that was idle when the drain began is served and answered with
 * `Connection: close`; a request the app answers synchronously (a refused NUL character) does not
 * crash it; idle connections are left to the keep-alive timeout, whose hint clients honour first.
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

async function listening(): Promise<{ server: Server; port: number }> {
  const server = createHttpServer(app.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Sends one request on `socket` and reads its answer (Content-Length bodies only). */
function exchange(socket: Socket, path: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = received.slice(0, end);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      const body = received.slice(end + 4);
      if (body.length < length) return;
      socket.off('data', onData);
      socket.off('error', reject);
      resolve({ head, body });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`);
  });
}

const connected = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });

const closedBy = (socket: Socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()));

test('the keep-alive hint is below the time an idle connection is kept open', () => {
  const hintSeconds = Math.floor(DEFAULT_SERVER_LIMITS.keepAliveTimeoutMs / 1000);
  expect(hintSeconds * 1000).toBeLessThan(DEFAULT_SERVER_LIMITS.keepAliveTimeoutMs);
});

test('a connection idle when the drain begins serves its next request, with Connection: close, then closes', async () => {
  const { server, port } = await listening();
  const socket = await connected(port);
  const first = await exchange(socket, '/api/v1/ping');
  expect(first.head).toMatch(/^HTTP\/1\.1 200/);
  expect(first.head).toMatch(/\r\nConnection: keep-alive(\r\n|$)/i);
  expect(first.head).toMatch(/\r\nKeep-Alive: timeout=5(\r\n|$)/i);

  const drained = drainServer(server, 30_000);
  // New connections are refused at once.
  await expect(connected(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  // The idle connection was not closed under the client: its next request is served.
  const closing = closedBy(socket);
  const second = await exchange(socket, '/api/v1/ping');
  expect(second.head).toMatch(/^HTTP\/1\.1 200/);
  expect(second.body).toBe('pong');
  expect(second.head).toMatch(/\r\nConnection: close(\r\n|$)/i);
  await closing;
  await drained;
});

test('a request the app refuses synchronously during a drain is answered 400 with Connection: close, and the process goes on', async () => {
  const { server, port } = await listening();
  const socket = await connected(port);
  await exchange(socket, '/api/v1/ping');
  const drained = drainServer(server, 30_000);
  const closing = closedBy(socket);
  const refused = await exchange(socket, '/api/v1/ping?x=%00');
  expect(refused.head).toMatch(/^HTTP\/1\.1 400/);
  expect(refused.head).toMatch(/\r\nConnection: close(\r\n|$)/i);
  expect(JSON.parse(refused.body)).toMatchObject({ status: 400 });
  await closing;
  await drained;
});

test('fetch (keep-alive, its default) loses no request sent on its idle connection while the server drains', async () => {
  const { server, port } = await listening();
  const url = `http://127.0.0.1:${port}/api/v1/ping`;
  const one = async () => {
    const response = await fetch(url);
    return {
      status: response.status,
      body: await response.text(),
      connection: response.headers.get('connection'),
    };
  };
  // One keep-alive connection, idle once answered.
  expect(await one()).toEqual({ status: 200, body: 'pong', connection: 'keep-alive' });
  // undici puts the connection back in its pool just after the body has been read.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const drained = drainServer(server, 30_000);
  expect(await one()).toEqual({ status: 200, body: 'pong', connection: 'close' });
  await drained;
});
