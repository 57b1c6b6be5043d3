import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon, { type Result } from 'autocannon';
import { createDb } from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate/index.ts';
import { importDocument } from '../src/domain/import/index.ts';
import { freePort, startServiceSources, stopProcess, waitForAnswer } from './processes.ts';

/*
 * `npx tsx bench/redisOutage.ts [refuse|blackhole]`: what a Redis outage costs the requests a node
 * serves (issue 16 §2b: p99 during the outage at most 2× normal). The service (its default two
 * workers, production mode, SQLite) reaches Redis (REDIS_REDIS_URL, default 127.0.0.1:6379) through
 * a TCP relay of this bench, which the bench cuts: `refuse` closes every connection and refuses new
 * ones (Redis stopped), `blackhole` (the default, the harsher) keeps them open and drops every
 * byte (a network partition: each command waits for its timeout). autocannon (10 keep-alive
 * connections) asks a get-by-id with an API key — the key's rate limit is counted in Redis — for
 * REDIS_PHASE_SECONDS (default 10) before, during and after the outage. Figures go to
 * bench/REDIS.md.
 */

const MODE = process.argv[2] === 'refuse' ? 'refuse' : 'blackhole';
const PHASE_SECONDS = Number(process.env.REDIS_PHASE_SECONDS ?? 10);
const REDIS = new URL(process.env.REDIS_REDIS_URL ?? 'redis://127.0.0.1:6379');
const ROOT = process.cwd();
const work = join(ROOT, '.tmp', `redisoutage-${process.pid}`);
const apiKey = randomBytes(24).toString('hex');

/** A TCP relay to Redis that can be cut and mended. */
function relay(port: number) {
  let cut = false;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => {});
    if (cut && MODE === 'refuse') {
      client.destroy();
      return;
    }
    const upstream = createConnection(Number(REDIS.port || 6379), REDIS.hostname);
    open.add(upstream);
    upstream.on('close', () => {
      open.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    // While cut (blackhole), bytes are dropped both ways: the connection stays up and says nothing.
    client.on('data', (chunk) => {
      if (!cut) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!cut) client.write(chunk);
    });
  });
  return {
    listen: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    cut() {
      cut = true;
      if (MODE === 'refuse') for (const socket of open) socket.destroy();
    },
    mend() {
      cut = false;
      // Connections that lost bytes while cut are out of step with Redis: the client reconnects.
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function prepare(): Promise<string> {
  const url = `file:${join(work, 'redisoutage.db')}`;
  await applyMigrations(url);
  const handle = await createDb(url);
  try {
    await importDocument(handle, {
      sites: [{ id: 1, siteDir: 'outage', siteName: 'Outage', isRoot: true }],
      channels: [{ id: 2, siteId: 1, parentId: 1, channelName: 'News' }],
      contents: [{ id: 1, channelId: 2, title: 'Content 1', checkedLevel: 1 }],
      apiKeys: [{ title: 'bench', key: apiKey, scopes: ['Contents'] }],
    });
  } finally {
    await handle.db.$disconnect();
  }
  return url;
}

interface Phase {
  name: string;
  result: Result;
}

function load(base: string, seconds: number): Promise<Result> {
  return Promise.resolve(
    autocannon({
      url: `${base}/api/v1/contents/1/2/1`,
      connections: 10,
      duration: seconds,
      headers: { 'x-ss-api-key': apiKey },
      timeout: 30,
    }),
  );
}

async function main() {
  mkdirSync(work, { recursive: true });
  const url = await prepare();
  const relayPort = await freePort();
  const redis = relay(relayPort);
  await redis.listen();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = startServiceSources(
    port,
    url,
    {
      LOG_LEVEL: 'error',
      REDIS_URL: `redis://127.0.0.1:${relayPort}`,
      REDIS_KEY_PREFIX: `bench-outage-${process.pid}:`,
    },
    ROOT,
  );
  const phases: Phase[] = [];
  try {
    await waitForAnswer(`${base}/api/v1/ping`, started, performance.now());
    await load(base, 3); // warm-up: modules compiled, validators built, connections open
    phases.push({ name: 'Redis up', result: await load(base, PHASE_SECONDS) });
    redis.cut();
    const cutAt = performance.now();
    phases.push({ name: `Redis cut (${MODE})`, result: await load(base, PHASE_SECONDS) });
    const outageSeconds = (performance.now() - cutAt) / 1000;
    redis.mend();
    phases.push({ name: 'Redis back', result: await load(base, PHASE_SECONDS) });
    const [up, down] = phases.map((phase) => phase.result);
    console.log(
      `### ${MODE}: 10 connections, ${PHASE_SECONDS} s a phase (outage ${outageSeconds.toFixed(1)} s); load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}\n`,
    );
    console.log('| phase | requests | req/s | p50 ms | p99 ms | max ms | non-2xx | errors |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const { name, result } of phases) {
      console.log(
        `| ${name} | ${result.requests.total} | ${(result.requests.total / result.duration).toFixed(0)} | ${result.latency.p50} | ${result.latency.p99} | ${result.latency.max} | ${result.non2xx} | ${result.errors + result.timeouts} |`,
      );
    }
    if (up && down) {
      console.log(
        `\np99 during the outage: ${(down.latency.p99 / Math.max(1, up.latency.p99)).toFixed(2)}× the p99 before it (target ≤ 2)`,
      );
    }
  } finally {
    await stopProcess(started);
    await redis.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
