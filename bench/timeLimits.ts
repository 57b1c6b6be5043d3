import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { createDb } from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate/index.ts';
import {
  createDatabase,
  dropDatabase,
  uniqueDatabaseName,
  withDatabase,
} from '../src/db/migrate/postgres.ts';
import { importDocument } from '../src/domain/import/index.ts';
import { WORST_CASE_WHERES, worstCaseTexts } from '../test/support/worstCase.ts';
import { freePort, startServiceSources, stopProcess, waitForAnswer } from './processes.ts';

/*
 * `npx tsx bench/timeLimits.ts [sqlite|postgresql]`: how fast ping and a get-by-id are answered
 * while hostile content filters run (docs/security/time-limits.md). The service runs as users
 * start it (the default two workers, tsx); three contents hold every text column long (a 4 MB
 * body, 200 KB elsewhere) and HOSTILE_SENDERS clients (default 4: two per worker) send, one
 * after the other for HOSTILE_SECONDS (default 10), the list filter of 20 long Like/NotLike
 * patterns over every text column (test/support/worstCase.ts, which the tests use too). A
 * prober meanwhile asks ping and a get-by-id every 20 ms. Before anything is measured, the service
 * is warmed up (HOSTILE_WARMUP_SECONDS of probes and four hostile filters, all discarded): a
 * process under tsx compiles each module on its first use and opens its pool's connections on
 * demand, which the first requests would otherwise pay as if it were steady state. Then
 * HOSTILE_QUIET_SECONDS (default 5) of probes alone, then the hostile filters.
 * BENCH_LOOP_DELAY=<directory> also records each worker's event-loop delay (bench/loopDelay.mjs);
 * BENCH_CPU_PROF=<directory> writes each worker's CPU profile (bench/cpuProfile.mjs).
 * PostgreSQL: BENCH_POSTGRES_URL (default postgresql://postgres@127.0.0.1:5432/postgres). Figures
 * go to bench/HOSTILE.md.
 */

const provider = process.argv[2] === 'postgresql' ? 'postgresql' : 'sqlite';
const SENDERS = Number(process.env.HOSTILE_SENDERS ?? 4);
const SECONDS = Number(process.env.HOSTILE_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.HOSTILE_WARMUP_SECONDS ?? 3);
const QUIET_SECONDS = Number(process.env.HOSTILE_QUIET_SECONDS ?? 5);
const LOOP_DELAY = process.env.BENCH_LOOP_DELAY;
const CPU_PROFILES = process.env.BENCH_CPU_PROF;
const ROOT = process.cwd();
const work = join(ROOT, '.tmp', `timelimits-${process.pid}`);
const apiKey = randomBytes(24).toString('hex');

const HOSTILE_FILTER = { siteId: 1, wheres: WORST_CASE_WHERES };

async function prepare(): Promise<{ url: string; drop: () => Promise<void> }> {
  let url: string;
  let drop: () => Promise<void>;
  if (provider === 'sqlite') {
    url = `file:${join(work, 'timelimits.db')}`;
    drop = async () => {};
  } else {
    const server = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
    const name = uniqueDatabaseName('bench_timelimits');
    await createDatabase(server, name);
    url = withDatabase(server, name);
    drop = () => dropDatabase(server, name);
  }
  await applyMigrations(url);
  const handle = await createDb(url);
  const { db } = handle;
  try {
    await importDocument(handle, {
      sites: [{ id: 1, siteDir: 'hostile', siteName: 'Hostile', isRoot: true }],
      channels: [{ id: 2, siteId: 1, parentId: 1, channelName: 'News' }],
      contents: [1, 2, 3, 4].map((id) => ({ id, channelId: 2, title: `Content ${id}`, checkedLevel: 1 })),
      apiKeys: [{ title: 'bench', key: apiKey, scopes: ['Contents'] }],
    });
    // Past the contract's limits, as data written by other means can be.
    for (const id of [1, 2, 3]) await db.content.update({ where: { id }, data: worstCaseTexts() });
  } finally {
    await db.$disconnect();
  }
  return { url, drop };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${values.length} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} | ${(sorted.at(-1) ?? Number.NaN).toFixed(1)}`;
};

async function timed(url: string, init?: RequestInit): Promise<{ ms: number; status: number }> {
  const start = performance.now();
  const response = await fetch(url, init);
  await response.arrayBuffer();
  return { ms: performance.now() - start, status: response.status };
}

function hostile(base: string) {
  return timed(`${base}/api/v1/contents`, {
    method: 'POST',
    headers: { 'x-ss-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(HOSTILE_FILTER),
  });
}

/**
 * The hostile senders, in a thread of their own: receiving their answers (~20 MB each on
 * PostgreSQL, where the filter matches) would otherwise hold the prober's event loop and be counted
 * as the service's delay. The thread's code is plain JavaScript (a worker thread's `eval`). The
 * prober uses fetch with keep-alive, as users' clients do.
 */
function hostileSenders(base: string): Promise<{ statuses: Record<string, number>; ms: number[] }> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { url, headers, body, senders, seconds } = workerData;
    const statuses = {};
    const ms = [];
    const deadline = performance.now() + seconds * 1000;
    const http = require('node:http');
    const agent = new http.Agent({ keepAlive: true });
    // node:http with the answer's bytes dropped as they come: a hostile sender is elsewhere in
    // life, and fetch's buffering of ~20 MB answers took a third of a core of this machine.
    const post = () =>
      new Promise((resolve, reject) => {
        const request = http.request(url, { method: 'POST', headers, agent }, (response) => {
          response.on('end', () => resolve(response.statusCode)).on('error', reject).resume();
        });
        request.on('error', reject).end(body);
      });
    const send = async () => {
      while (performance.now() < deadline) {
        const start = performance.now();
        const status = await post();
        ms.push(performance.now() - start);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    };
    Promise.all(Array.from({ length: senders }, send)).then(() => parentPort.postMessage({ statuses, ms }));
  `;
  const thread = new Worker(code, {
    eval: true,
    workerData: {
      url: `${base}/api/v1/contents`,
      headers: { 'x-ss-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(HOSTILE_FILTER),
      senders: SENDERS,
      seconds: SECONDS,
    },
  });
  return new Promise((resolve, reject) => {
    thread.once('message', (result: { statuses: Record<string, number>; ms: number[] }) => {
      resolve(result);
      void thread.terminate();
    });
    thread.once('error', reject);
  });
}

/** Ping and get-by-id latencies, every 20 ms, until `until` resolves. */
async function probe(base: string, until: Promise<unknown>) {
  let done = false;
  void until.then(() => {
    done = true;
  });
  const ping: number[] = [];
  const get: number[] = [];
  const failures: number[] = [];
  while (!done) {
    const [a, b] = await Promise.all([
      timed(`${base}/api/v1/ping`),
      timed(`${base}/api/v1/contents/1/2/4`, { headers: { 'x-ss-api-key': apiKey } }),
    ]);
    ping.push(a.ms);
    get.push(b.ms);
    if (a.status !== 200) failures.push(a.status);
    if (b.status !== 200) failures.push(b.status);
    await sleep(20);
  }
  return { ping, get, failures };
}

/**
 * Each worker's blocks of the event loop (bench/loopDelay.mjs) while the hostile filters ran: how
 * many over 50 ms and the longest, with the worker's CPU time in each (all its threads), so that
 * a block of the worker's own work can be told from a wait for the machine's cores.
 */
function reportLoopDelay(directory: string, from: number, to: number) {
  for (const file of readdirSync(directory).filter((name) => name.startsWith('loop-'))) {
    const { pid, blocks } = JSON.parse(readFileSync(join(directory, file), 'utf8')) as {
      pid: number;
      blocks: [number, number, number][];
    };
    const during = blocks.filter(([at]) => at >= from && at <= to).sort((a, b) => b[1] - a[1]);
    const longest = during.slice(0, 8).map(([, ms, cpu]) => `${ms} (CPU ${cpu})`);
    console.log(
      `worker ${pid}, under hostile filters: ${during.length} blocks of the event loop > 50 ms, longest ${longest.join(', ') || '–'} ms`,
    );
    rmSync(join(directory, file));
  }
}

async function main() {
  mkdirSync(work, { recursive: true });
  const { url, drop } = await prepare();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = startServiceSources(
    port,
    url,
    {
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      REDIS_URL: '',
      ...(LOOP_DELAY !== undefined && { BENCH_LOOP_DELAY: LOOP_DELAY }),
      ...(CPU_PROFILES !== undefined && { BENCH_CPU_PROF: CPU_PROFILES }),
      NODE_OPTIONS: [
        process.env.NODE_OPTIONS ?? '',
        LOOP_DELAY === undefined ? '' : `--import ${join(ROOT, 'bench/loopDelay.mjs')}`,
        CPU_PROFILES === undefined ? '' : `--import ${join(ROOT, 'bench/cpuProfile.mjs')}`,
      ].join(' '),
    },
    ROOT,
  );
  let hostileFrom = Number.NaN;
  let hostileTo = Number.NaN;
  try {
    await waitForAnswer(`${base}/api/v1/ping`, started, performance.now());
    // Warm-up, discarded: probes, hostile filters on four connections at once (each worker builds
    // the list's request validator on its first such request, ~0.3 s; which worker a connection
    // goes to is the supervisor's or the kernel's choice, so two could both go to one), probes again.
    await probe(base, sleep(WARMUP_SECONDS * 1000));
    await Promise.all(Array.from({ length: 4 }, () => hostile(base)));
    await probe(base, sleep(WARMUP_SECONDS * 1000));
    const quiet = await probe(base, sleep(QUIET_SECONDS * 1000));

    hostileFrom = Date.now();
    const senders = hostileSenders(base);
    const loaded = await probe(base, senders);
    const { statuses, ms: hostileMs } = await senders;
    hostileTo = Date.now();

    console.log(
      `### ${provider}: ${SENDERS} hostile senders for ${SECONDS} s (two workers), after ${2 * WARMUP_SECONDS} s of warm-up; load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}\n`,
    );
    console.log('| requests | n | p50 ms | p99 ms | max ms |');
    console.log('|---|---|---|---|---|');
    console.log(`| ping, quiet | ${summary(quiet.ping)} |`);
    console.log(`| get-by-id, quiet | ${summary(quiet.get)} |`);
    console.log(`| ping, under hostile filters | ${summary(loaded.ping)} |`);
    console.log(`| get-by-id, under hostile filters | ${summary(loaded.get)} |`);
    console.log(`| the hostile filter itself | ${summary(hostileMs)} |`);
    console.log(
      `\nhostile answers: ${Object.entries(statuses)
        .map(([status, n]) => `${n} × ${status}`)
        .join(', ')}; probe failures: ${loaded.failures.length + quiet.failures.length}`,
    );
  } finally {
    await stopProcess(started);
    if (LOOP_DELAY !== undefined) reportLoopDelay(LOOP_DELAY, hostileFrom, hostileTo);
    await drop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
