import type { Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import express from 'express';
import pino from 'pino';
import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { loadConfig } from '../../src/config.ts';
import type { DbProvider } from '../../src/db/client.ts';
import {
  clusterCollector,
  METRIC_NAMES,
  type MetricsEndpoint,
  type MetricsReply,
  type MetricsRequest,
  ServiceMetrics,
  serveMetrics,
  statementKind,
} from '../../src/http/metrics.ts';
import { startTestApp, TEST_SECRET, type TestApp } from '../support/app.ts';
import { testServerUrl } from '../support/database.ts';
import { loadFixture } from '../support/fixtures.ts';

/*
 * Metrics in one process, through HTTP into a real database: the app counts and times requests
 * and its client times queries (as src/worker.ts wires them), and the metrics listener serves them.
 * The cluster sum over workers is test/metrics/cluster.test.ts.
 */

const provider: DbProvider = testServerUrl() ? 'postgresql' : 'sqlite';
const silent = pino({ level: 'silent' });
const METRICS_TOKEN = 'metrics-token-for-the-test-0123456789';
/** What the app logs (request lines), to show that the metrics stage changes nothing there. */
const logLines: string[] = [];
const appLogger = pino(
  { level: 'info' },
  new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  }),
);

let testApp: TestApp;
let metrics: ServiceMetrics;
let request: TestAgent;
let open: MetricsEndpoint;
let guarded: MetricsEndpoint;
let allKey: string;
let usersOnlyKey: string;

beforeAll(async () => {
  metrics = new ServiceMetrics();
  testApp = await startTestApp({ logger: appLogger, metrics });
  await loadFixture(testApp);
  request = testApp.request;
  const collect = () => metrics.registry.metrics();
  open = await serveMetrics({ port: 0, host: '127.0.0.1', logger: silent, collect });
  guarded = await serveMetrics({ port: 0, host: '127.0.0.1', token: METRICS_TOKEN, logger: silent, collect });
  allKey = await testApp.createApiKey('all', { title: 'metrics test' });
  usersOnlyKey = await testApp.createApiKey(['Users'], { title: 'metrics test' });
});

afterAll(async () => {
  await open?.close();
  await guarded?.close();
  await testApp?.close();
});

async function scrape(endpoint: MetricsEndpoint = open, headers: Record<string, string> = {}) {
  const response = await fetch(`http://127.0.0.1:${endpoint.port}/metrics`, { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The value of one series in the exposition text (labels as written, sorted by name), or 0. */
function sampleOf(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([label, value]) => `${label}="${value}"`)
    .join(',');
  const series = wanted === '' ? name : `${name}{${wanted}}`;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return 0;
}

/** Every series of a metric with its labels, parsed. */
function seriesOf(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const found: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
    found.push({ labels, value: Number(match[3]) });
  }
  return found;
}

const listContents = (key?: string) => {
  const call = request.post('/api/v1/contents').send({ siteId: 1 });
  return key === undefined ? call : call.set('X-SS-API-KEY', key);
};

describe(`metrics on ${provider}`, () => {
  test('metrics are off unless METRICS_PORT is set, and never on the API port', async () => {
    expect(loadConfig({}).metrics).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).toEqual({
      port: 9464,
      host: undefined,
      token: undefined,
    });
    // Even with metrics on, the API port has no /metrics: a 404 problem like any unknown path.
    const onApiPort = await request.get('/metrics').set('X-SS-API-KEY', allKey);
    expect(onApiPort.status).toBe(404);
    expect(onApiPort.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  test('request counters move with requests, by operationId and status', async () => {
    const before = (await scrape()).text;
    for (let i = 0; i < 3; i++) expect((await listContents(allKey)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await listContents()).status).toBe(401);
    expect((await listContents(usersOnlyKey)).status).toBe(403);
    expect((await request.get('/api/v1/contents/1/1/999999').set('X-SS-API-KEY', allKey)).status).toBe(404);
    expect((await request.get('/no/such/path/4711')).status).toBe(404);
    const after = await scrape();
    expect(after.status).toBe(200);
    expect(after.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const delta = (labels: Record<string, string>) =>
      sampleOf(after.text, METRIC_NAMES.requests, labels) - sampleOf(before, METRIC_NAMES.requests, labels);
    expect(delta({ operation: 'listContents', status: '200' })).toBe(3);
    expect(delta({ operation: 'listContents', status: '401' })).toBe(2);
    expect(delta({ operation: 'listContents', status: '403' })).toBe(1);
    expect(delta({ operation: 'getContent', status: '404' })).toBe(1);
    expect(delta({ operation: 'unmatched', status: '404' })).toBe(1);
    // The label is the operationId, never the path: no id or unknown path reaches the output.
    expect(after.text).not.toContain('no/such/path');
    expect(after.text).not.toContain('/api/v1');
    expect(after.text).not.toContain('/contents/');
    const operations = new Set(seriesOf(after.text, METRIC_NAMES.requests).map((s) => s.labels.operation));
    for (const operation of operations) expect(operation).toMatch(/^(?:[a-z][A-Za-z]+|unmatched)$/);
  });

  test('a path that cannot be decoded is still logged and refused as without metrics', async () => {
    const before = (await scrape()).text;
    const path = '/api/v1/contents/%E0%A4%A/1/1';
    const answer = await request.get(path).set('X-SS-API-KEY', allKey);
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(logLines.some((line) => line.includes(path))).toBe(true);
    const after = (await scrape()).text;
    const labels = { operation: 'unmatched', status: '400' };
    expect(
      sampleOf(after, METRIC_NAMES.requests, labels) - sampleOf(before, METRIC_NAMES.requests, labels),
    ).toBe(1);
  });

  test('a request refused before the dispatcher (429) is still counted under its operation', async () => {
    // Its own app: a limit of one request a minute per client, charged before any operation's route.
    const limited = new ServiceMetrics();
    const app = await startTestApp({ metrics: limited, config: { rateLimitPerMinute: 1 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await app.request.post('/api/v1/contents').send({ siteId: 1 })).status);
      expect(statuses).toEqual([401, 429, 429]);
      const unknown = await app.request.get('/no/such/path/4711');
      expect(unknown.status).toBe(429);
      const text = await limited.registry.metrics();
      expect(sampleOf(text, METRIC_NAMES.requests, { operation: 'listContents', status: '401' })).toBe(1);
      expect(sampleOf(text, METRIC_NAMES.requests, { operation: 'listContents', status: '429' })).toBe(2);
      expect(sampleOf(text, METRIC_NAMES.requests, { operation: 'unmatched', status: '429' })).toBe(1);
    } finally {
      await app.close();
    }
  });

  test('request latency is a histogram per operation, with cumulative buckets', async () => {
    expect((await listContents(allKey)).status).toBe(200);
    const { text } = await scrape();
    const name = METRIC_NAMES.requestDuration;
    const buckets = seriesOf(text, `${name}_bucket`).filter((s) => s.labels.operation === 'listContents');
    expect(buckets.map((s) => s.labels.le)).toEqual([
      '0.001',
      '0.0025',
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '5',
      '10',
      '30',
      '+Inf',
    ]);
    const counts = buckets.map((s) => s.value);
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1] ?? 0);
    const count = sampleOf(text, `${name}_count`, { operation: 'listContents' });
    expect(count).toBeGreaterThanOrEqual(4);
    expect(counts.at(-1)).toBe(count);
    expect(sampleOf(text, `${name}_sum`, { operation: 'listContents' })).toBeGreaterThan(0);
    expect(text).toContain(`# TYPE ${name} histogram`);
  });

  test('database queries are timed by kind of statement, without their SQL', async () => {
    const before = (await scrape()).text;
    const name = `${METRIC_NAMES.queryDuration}_count`;
    expect((await listContents(allKey)).status).toBe(200);
    const created = await request
      .post('/api/v1/apiKeys')
      .set('X-SS-API-KEY', allKey)
      .send({ title: 'made for metrics', scopes: ['Contents'] });
    expect(created.status).toBe(201);
    const sql = 'SELECT title FROM siteserver_Content WHERE title = ' + "'metrics-marker-5150'";
    const sandboxed = await request
      .get('/api/v1/stl/sqlContents')
      .query({ queryString: sql })
      .set('X-SS-API-KEY', allKey);
    expect(sandboxed.status).toBe(200);
    const after = (await scrape()).text;
    const delta = (statement: string) =>
      sampleOf(after, name, { statement }) - sampleOf(before, name, { statement });
    // The list reads the page and its count; creating a key inserts it.
    expect(delta('read')).toBeGreaterThanOrEqual(2);
    expect(delta('write')).toBeGreaterThanOrEqual(1);
    const statements = seriesOf(after, name).map((s) => s.labels.statement);
    for (const statement of statements)
      expect(['read', 'write', 'transaction', 'other']).toContain(statement);
    expect(sampleOf(after, `${METRIC_NAMES.queryDuration}_sum`, { statement: 'read' })).toBeGreaterThan(0);
    expect(after).toContain(`${METRIC_NAMES.queryDuration}_bucket{le="0.0001",statement="read"}`);
    // Neither SQL nor a secret shows: not the statements, not the sandbox query, not a key or its digest.
    expect(after).not.toMatch(/\b(?:SELECT|INSERT|UPDATE|FROM|WHERE)\b/);
    expect(after).not.toContain('metrics-marker-5150');
    expect(after).not.toContain('siteserver_Content');
    expect(after).not.toContain('made for metrics');
    expect(after).not.toContain(allKey);
    expect(after).not.toContain(created.body.key);
    expect(after).not.toContain(TEST_SECRET);
  });

  test('process metrics are there', async () => {
    const { text } = await scrape();
    expect(sampleOf(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sampleOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    expect(sampleOf(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
  });

  test('with METRICS_TOKEN a scrape needs the bearer token', async () => {
    const none = await scrape(guarded);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(JSON.parse(none.text)).toMatchObject({
      status: 401,
      type: expect.stringMatching(/unauthorized$/),
    });
    expect(none.text).not.toContain(METRICS_TOKEN);
    expect((await scrape(guarded, { Authorization: `Bearer ${METRICS_TOKEN}x` })).status).toBe(401);
    expect((await scrape(guarded, { Authorization: `Basic ${METRICS_TOKEN}` })).status).toBe(401);
    // An API key is no way in: the port knows only its own token.
    expect((await scrape(guarded, { 'X-SS-API-KEY': allKey })).status).toBe(401);
    const granted = await scrape(guarded, { Authorization: `Bearer ${METRICS_TOKEN}` });
    expect(granted.status).toBe(200);
    expect(granted.text).toContain(`# TYPE ${METRIC_NAMES.requests} counter`);
  });

  test('the metrics port answers GET /metrics only', async () => {
    const other = await fetch(`http://127.0.0.1:${open.port}/api/v1/ping`);
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const posted = await fetch(`http://127.0.0.1:${open.port}/metrics`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`http://127.0.0.1:${open.port}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });
});

/** A stand-in for a cluster worker: answers the supervisor's request with these figures, or never. */
function fakeWorker(metrics: ServiceMetrics | undefined): Worker {
  const worker = new EventEmitter() as EventEmitter & { send: Worker['send'] };
  worker.send = ((message: MetricsRequest, _handle: unknown, callback?: (error: Error | null) => void) => {
    callback?.(null);
    if (metrics === undefined) return true;
    void metrics.registry.getMetricsAsJSON().then((figures) => {
      // Through JSON, as over the IPC channel.
      const reply: MetricsReply = JSON.parse(
        JSON.stringify({ cms: 'metrics', id: message.id, metrics: figures }),
      );
      worker.emit('message', reply);
    });
    return true;
  }) as Worker['send'];
  return worker as unknown as Worker;
}

describe('metrics configuration, labels and the cluster sum', () => {
  test('the supervisor sums the workers that answer and counts those that do not', async () => {
    const workers = [new ServiceMetrics(), new ServiceMetrics()];
    // Each worker counts requests of its own app: 2 pings in one, 3 in the other.
    for (const [worker, count] of [
      [workers[0], 2],
      [workers[1], 3],
    ] as const) {
      const served = express();
      // Every request of this app is a ping.
      if (worker) served.use(worker.requests(() => ({ operationId: 'ping' })));
      served.get('/api/v1/ping', (_req, res) => {
        res.type('text/plain').send('pong');
      });
      for (let i = 0; i < count; i++) expect((await supertest(served).get('/api/v1/ping')).status).toBe(200);
    }
    const pings = `${METRIC_NAMES.requests}{operation="ping",status="200"}`;
    const both = await clusterCollector(() => workers.map(fakeWorker), 1000)();
    expect(sampleOf(both, METRIC_NAMES.requests, { operation: 'ping', status: '200' })).toBe(5);
    expect(both).toContain(`${pings} 5`);
    expect(sampleOf(both, METRIC_NAMES.workersServing)).toBe(2);
    expect(sampleOf(both, METRIC_NAMES.workersReporting)).toBe(2);
    expect(sampleOf(both, `${METRIC_NAMES.requestDuration}_count`, { operation: 'ping' })).toBe(5);
    // One silent worker (starting, stuck): the scrape still answers, without its figures.
    const partial = await clusterCollector(() => [fakeWorker(workers[1]), fakeWorker(undefined)], 50)();
    expect(sampleOf(partial, METRIC_NAMES.requests, { operation: 'ping', status: '200' })).toBe(3);
    expect(sampleOf(partial, METRIC_NAMES.workersServing)).toBe(2);
    expect(sampleOf(partial, METRIC_NAMES.workersReporting)).toBe(1);
  });

  test('METRICS_* are validated, and the token is never repeated', () => {
    expect(
      loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '127.0.0.1', METRICS_TOKEN: METRICS_TOKEN }).metrics,
    ).toEqual({ port: 9464, host: '127.0.0.1', token: METRICS_TOKEN });
    expect(() => loadConfig({ METRICS_PORT: '3000' })).toThrow(/METRICS_PORT must differ from PORT/);
    expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow(/METRICS_PORT must be an integer/);
    expect(() => loadConfig({ METRICS_PORT: 'nine' })).toThrow(/METRICS_PORT must be an integer/);
    expect(() => loadConfig({ METRICS_TOKEN: METRICS_TOKEN })).toThrow(/need METRICS_PORT/);
    expect(() => loadConfig({ METRICS_PORT: '9464', METRICS_HOST: 'a b' })).toThrow(/METRICS_HOST/);
    const short = 'short-secret';
    let message = '';
    try {
      loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: short });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/METRICS_TOKEN must be at least 16 characters/);
    expect(message).not.toContain(short);
  });

  test('statements are classified by their first word only', () => {
    expect(statementKind('SELECT "id" FROM "Content" WHERE "id" = $1')).toBe('read');
    expect(statementKind('  with x as (select 1) select * from x')).toBe('read');
    expect(statementKind('INSERT INTO "ApiKey" ("title") VALUES ($1)')).toBe('write');
    expect(statementKind('update "Content" set "hits" = 1')).toBe('write');
    expect(statementKind('DELETE FROM "SharedMark"')).toBe('write');
    expect(statementKind('BEGIN')).toBe('transaction');
    expect(statementKind('COMMIT')).toBe('transaction');
    expect(statementKind('-- Implicit "COMMIT" query via underlying driver')).toBe('other');
    expect(statementKind('PRAGMA journal_mode = WAL')).toBe('other');
    expect(statementKind('')).toBe('other');
  });
});
