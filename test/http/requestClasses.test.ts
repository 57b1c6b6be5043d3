import { execFile } from 'node:child_process';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { expect, test } from '@jest/globals';
import express from 'express';
import { createHttpServer } from '../../src/http/server.ts';

/*
 * The server builds its requests and responses with the app's prototypes (src/http/server.ts,
 * classesFor): express's own change of their prototype then changes nothing, and V8 keeps both as
 * objects with fast properties — what every property access of every stage relies on
 * (bench/RUNTIME.md, "Requests born with the app's prototypes").
 */

const ROOT = new URL('../..', import.meta.url);

/** What node built, before express saw it, and what express then made of it. */
interface Seen {
  bornWithAppPrototype: boolean;
  handledWithAppPrototype: boolean;
  isNodeRequest: boolean;
  isNodeResponse: boolean;
  header: string | undefined;
}

async function served(
  app: express.Express,
  path: string,
): Promise<{ seen: Seen[]; status: number; body: unknown }> {
  const seen: Seen[] = [];
  const born = new WeakSet<object>();
  const server = createHttpServer(app);
  // Ahead of the app: the request as node built it.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response)
      born.add(req);
  });
  app.get(path, (req, res) => {
    seen.push({
      bornWithAppPrototype: born.has(req),
      handledWithAppPrototype: Object.getPrototypeOf(req) === app.request,
      isNodeRequest: req instanceof IncomingMessage,
      isNodeResponse: res instanceof ServerResponse,
      header: req.get('x-probe'),
    });
    res.status(201).json({ path: req.path });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'X-Probe': 'yes' } });
    return { seen, status: response.status, body: await response.json() };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

test("requests and responses are born with the app's prototypes, and express works on them", async () => {
  const app = express();
  const first = await served(app, '/one');
  expect(first).toEqual({
    seen: [
      {
        bornWithAppPrototype: true,
        handledWithAppPrototype: true,
        isNodeRequest: true,
        isNodeResponse: true,
        header: 'yes',
      },
    ],
    status: 201,
    body: { path: '/one' },
  });
  // A second server on the same app takes the same classes: its requests too are born right.
  const prototype = app.request;
  const second = await served(app, '/two');
  expect(app.request).toBe(prototype);
  expect(second.seen[0]?.bornWithAppPrototype).toBe(true);
  expect(second.status).toBe(201);
});

test('a request and its response keep fast properties through express', async () => {
  // V8 says so only to a process started with --allow-natives-syntax.
  const program = `
    import express from 'express';
    import { createHttpServer } from './src/http/server.ts';
    const fast = new Function('o', 'return %HasFastProperties(o)');
    const app = express();
    const seen = [];
    app.use((req, _res, next) => { req.principal = { kind: 'anonymous' }; req.openapi = {}; next(); });
    app.get('/probe', (req, res) => {
      res.setHeader('X-Probe', 'yes');
      res.once('finish', () => seen.push([fast(req), fast(res)]));
      res.json({ ok: true });
    });
    const server = createHttpServer(app);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    for (let i = 0; i < 3; i++) await (await fetch('http://127.0.0.1:' + server.address().port + '/probe')).text();
    server.close();
    console.log(JSON.stringify(seen));
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', program],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' },
  );
  expect(JSON.parse(stdout)).toEqual([
    [true, true],
    [true, true],
    [true, true],
  ]);
});
