import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, gzip } from 'node:zlib';
import express from 'express';
import { brotliParams, gzipLevel } from '../src/http/compression.ts';
import { floorAnswer, rowsPageOf, type ScenarioName } from './scenarios.ts';
import { floorQueries, openSql, type ScenarioParams } from './sql.ts';

/*
 * The floors, in a process of their own (started by bench/run.ts like the service, loaded by the
 * same autocannon client). Each serves `/<scenario>`:
 *   A  bare node:http answering the service's own response bytes for that scenario (fixed body);
 *   B  bare express 5 (JSON body parser, nothing else) answering the same bytes;
 *   C  bare node:http running the scenario's SQL through the driver, serialised with JSON.stringify;
 *   D  as C, on a copy of the database holding only the primary key and (siteId, channelId) indexes
 *      (naive, filtered deep page only);
 *   R  as C for the list pages (list-page1, list-fields(-hits), the compressed lists), with the total from
 *      the maintained counts (ContentTally) as the service takes it: the same rows through the driver,
 *      JSON.stringify, bare node:http — what floor A's fixed bytes cost when they must be read and made.
 * A request that asks for br or gzip (the compressed lists) gets every floor's answer compressed per
 * request with the service's dynamic settings (brotliParams, gzipLevel: src/http/compression.ts), the
 * work the service must do for it; other answers go as they are.
 * Usage: tsx bench/floors.ts CONFIG.json; prints "ready" once every floor listens.
 */

export interface FloorsConfig {
  ports: { A: number; B: number; C: number; D?: number; R?: number };
  databaseUrl: string;
  naiveUrl?: string;
  params: ScenarioParams;
  /** The service's response body per scenario: what floors A and B answer. */
  bodies: Partial<Record<ScenarioName, string>>;
}

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as FloorsConfig;
const bodies = new Map(Object.entries(config.bodies).map(([name, body]) => [name, Buffer.from(body)]));

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString()));
    req.on('error', reject);
  });
}

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * The body as the request asked for it: compressed with the service's own settings for a dynamic
 * answer (src/http/compression.ts), on libuv's thread pool as the service does.
 */
async function encoded(
  req: IncomingMessage,
  body: Buffer | string,
): Promise<{ body: Buffer | string; coding?: string }> {
  const asked = req.headers['accept-encoding'];
  if (asked === 'br') {
    const params = brotliParams(Buffer.byteLength(body), 'dynamic');
    return { body: await brotli(body, { params }), coding: 'br' };
  }
  if (asked === 'gzip') return { body: await gzipped(body, { level: gzipLevel('dynamic') }), coding: 'gzip' };
  return { body };
}

async function send(req: IncomingMessage, res: ServerResponse, status: number, answer: Buffer | string) {
  const { body, coding } = await encoded(req, answer);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...(coding && { 'content-encoding': coding }),
  });
  res.end(body);
}

// No server-side timeouts: behind a slow synchronous query, queued requests wait longer than node's
// default 60 s for their headers to be read, and would be cut off (the service's own are the same).
const NO_TIMEOUTS = { requestTimeout: 0, headersTimeout: 0 };

const floorA = createServer(NO_TIMEOUTS, async (req, res) => {
  await readBody(req);
  const body = bodies.get((req.url ?? '').slice(1));
  if (body) await send(req, res, 200, body);
  else await send(req, res, 404, '{}');
});

const app = express();
app.use(express.json());
app.all('/:scenario', async (req, res) => {
  const body = bodies.get(String(req.params.scenario));
  if (!body) {
    res.status(404).json({});
    return;
  }
  const answer = await encoded(req, body);
  if (answer.coding) res.set('content-encoding', answer.coding);
  res.type('application/json').send(answer.body);
});

/** Floor R's answers: the list pages' rows with the maintained total; undefined for other scenarios. */
function rowsAnswer(name: ScenarioName, q: ReturnType<typeof floorQueries>): Promise<unknown> | undefined {
  const page = rowsPageOf(name);
  if (page === 'list-page1') return q.listPage1Rows();
  if (page === 'list-fields') return q.listFieldsRows();
  if (page === 'list-fields-hits') return q.listFieldsHitsRows();
  return undefined;
}

function sqlFloor(url: string, only?: ScenarioName, rows = false): Server {
  const queries = floorQueries(openSql(url), config.params);
  return createServer(NO_TIMEOUTS, async (req, res) => {
    const name = (req.url ?? '').slice(1) as ScenarioName;
    try {
      const body = await readBody(req);
      if (!bodies.has(name) || (only && name !== only)) return send(req, res, 404, '{}');
      const answer = await (rows ? rowsAnswer(name, queries) : floorAnswer(name, queries, body));
      if (answer === undefined) return send(req, res, 404, '{}');
      await send(req, res, 200, JSON.stringify(answer));
    } catch (error) {
      process.stderr.write(`floor ${name}: ${(error as Error).message}\n`);
      await send(req, res, 500, '{}');
    }
  });
}

const listen = (server: Server | express.Express, port: number) =>
  new Promise<void>((resolve) => {
    server.listen(port, '127.0.0.1', () => resolve());
  });

await listen(floorA, config.ports.A);
await listen(app, config.ports.B);
await listen(sqlFloor(config.databaseUrl), config.ports.C);
if (config.naiveUrl && config.ports.D)
  await listen(sqlFloor(config.naiveUrl, 'filtered-deep'), config.ports.D);
if (config.ports.R) await listen(sqlFloor(config.databaseUrl, undefined, true), config.ports.R);
process.stdout.write('ready\n');
