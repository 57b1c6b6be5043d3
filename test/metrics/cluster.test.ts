import { Agent, createServer, request } from 'node:http';
import { afterEach, describe, expect, test } from '@jest/globals';
import { METRIC_NAMES } from '../../src/http/metrics.ts';
import { freePort, type Service, startService, stopService } from '../process/processes.ts';
import { createEmptyDatabase, type EmptyDatabase, testServerUrl } from '../support/database.ts';

/*
 * Metrics as an operator runs them: `npm start` with METRICS_PORT. Under the supervisor its port
 * answers the sum over the workers (the client keeps two connections alive, which cluster's
 * round-robin hands one to each worker, and sends every request over them: a count equal to every
 * request made proves the sum); with WORKERS=0 the process serves its own.
 */

const provider = testServerUrl() ? 'postgresql' : 'sqlite';
const TOKEN = 'cluster-metrics-token-0123456789';

let database: EmptyDatabase | undefined;
let service: Service | undefined;

/** Keep-alive connections, as real clients hold them: at most two per port. */
let agent = new Agent({ keepAlive: true, maxSockets: 2 });
/** The connections the API's answers came on. */
const sockets = new Set<unknown>();

afterEach(async () => {
  agent.destroy();
  agent = new Agent({ keepAlive: true, maxSockets: 2 });
  sockets.clear();
  await stopService(service);
  service = undefined;
  await database?.drop();
  database = undefined;
});

/** One GET on the client's kept-alive connections. */
function get(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      sockets.add(res.socket);
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const PINGS = `${METRIC_NAMES.requests}{operation="ping",status="200"}`;

/** Scrapes until the ping count reaches `expected` (a response may reach the client a moment
 * before its worker has counted it), then answers the last scrape. */
async function scrapeUntil(port: number, expected: number, headers: Record<string, string>) {
  let last = await get(port, '/metrics', headers);
  for (let attempt = 0; attempt < 50 && (sample(last.text, PINGS) ?? 0) < expected; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await get(port, '/metrics', headers);
  }
  return last;
}

async function start(env: Record<string, string>) {
  database = await createEmptyDatabase();
  const [port, metricsPort] = [await freePort(), await freePort()];
  service = startService({
    DATABASE_URL: database.url,
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    ...env,
  });
  return { port, metricsPort, service };
}

describe(`metrics of a running service on ${provider}`, () => {
  test('under the supervisor the metrics port sums every worker', async () => {
    const { port, metricsPort, service: running } = await start({ WORKERS: '2', METRICS_TOKEN: TOKEN });
    await running.waitFor(/"msg":"workers ready"/, 60_000);
    expect(running.output()).toMatch(new RegExp(`"metricsPort":${metricsPort}`));
    const auth = { Authorization: `Bearer ${TOKEN}` };

    expect((await get(metricsPort, '/metrics')).status).toBe(401);
    // The API port has no metrics.
    expect((await get(port, '/metrics')).status).toBe(404);
    sockets.clear();
    // Two rounds of five at once: both connections opened, then kept and used again.
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.all(Array.from({ length: 5 }, () => get(port, '/api/v1/ping')));
      expect(answers.map(({ status }) => status)).toEqual([200, 200, 200, 200, 200]);
    }
    expect(sockets.size).toBe(2);

    const scraped = await scrapeUntil(metricsPort, 10, auth);
    expect(scraped.status).toBe(200);
    expect(sample(scraped.text, PINGS)).toBe(10);
    expect(sample(scraped.text, `${METRIC_NAMES.requests}{operation="unmatched",status="404"}`)).toBe(1);
    expect(sample(scraped.text, METRIC_NAMES.workersServing)).toBe(2);
    expect(sample(scraped.text, METRIC_NAMES.workersReporting)).toBe(2);
    // Two workers' process figures, summed (each worker alone holds tens of MB).
    expect(sample(scraped.text, 'process_resident_memory_bytes')).toBeGreaterThan(40 * 1024 * 1024);
    expect(scraped.text).toMatch(/^cms_db_query_duration_seconds_count\{statement="read"\} [1-9]/m);
    expect(scraped.text).not.toContain(TOKEN);
  });

  test('with WORKERS=0 the process serves its own metrics', async () => {
    const { port, metricsPort, service: running } = await start({ WORKERS: '0' });
    await running.waitFor(/"msg":"listening"/, 60_000);
    sockets.clear();
    for (let i = 0; i < 3; i++) expect((await get(port, '/api/v1/ping')).status).toBe(200);
    // One after another: one connection, kept alive.
    expect(sockets.size).toBe(1);
    const scraped = await scrapeUntil(metricsPort, 3, {});
    expect(scraped.status).toBe(200);
    expect(sample(scraped.text, PINGS)).toBe(3);
    // No supervisor, so no worker gauges.
    expect(sample(scraped.text, METRIC_NAMES.workersServing)).toBeUndefined();
    expect(sample(scraped.text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  test('a metrics port in use stops the service at start, saying so', async () => {
    const blocker = createServer();
    const taken = await freePort();
    await new Promise<void>((resolve) => blocker.listen(taken, resolve));
    try {
      database = await createEmptyDatabase();
      service = startService({
        DATABASE_URL: database.url,
        PORT: String(await freePort()),
        METRICS_PORT: String(taken),
        WORKERS: '1',
      });
      expect(await service.exited).toBe(1);
      expect(service.output()).toMatch(new RegExp(`metrics port ${taken}: listen EADDRINUSE`));
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
