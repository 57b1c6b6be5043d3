/**
 * Two requests of the write surface that grow with their input (issue 17), timed one at a time on
 * the built service (`node dist/src/main.js`, `WORKERS=0`, `NODE_ENV=production`; run
 * `npm run build` first):
 *   - `channels`: `GET /api/v1/channels/{siteId}` (listChannels) on a site of N channels
 *     (default 10,000): a root, 20 sections, 10 subsections each, then the rest at random below
 *     those, up to 6 levels deep, siblings in shuffled taxis order; a few contents for the counts;
 *     timed four ways: the same list again, again with the last answer's ETag in If-None-Match,
 *     after a write of a content's title each time (not shown in the list), after a write of a
 *     channel each time (shown: the list is built again);
 *   - `check`: `POST /api/v1/contents/actions/check` (checkContents) of 1,000 contents of a database
 *     of the benchmark's data set (bench/generate.ts, default 100,000 contents, imported as
 *     `cms import` does), alternately approving and rejecting the same 1,000.
 * Prints p50/p99/min/max per part and the machine's load average (bench/README.md, "Write surface").
 * Usage: tsx bench/writeSurface.ts [--db sqlite|postgresql] [--part channels,check]
 *          [--channels N] [--contents N] [--runs N] [--profile DIR] [--service DIR,...]
 */

import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDb } from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate/index.ts';
import { importDocument, importFrom } from '../src/domain/import/index.ts';
import { streamSource } from '../src/domain/import/source.ts';
import { SCOPES } from '../src/domain/principal.ts';
import { SITE_ID, seededRandom, writeImportFile } from './generate.ts';
import { freePort, startProcess, stopProcess, waitForAnswer } from './processes.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const HERE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The checkouts whose built services are measured, in turn on the same data (`--service DIR,DIR`:
 * another checkout's beside this one's, for a before/after without loading the data twice).
 */
const ROOTS = option('service', HERE)
  .split(',')
  .map((dir) => resolve(dir));
const provider = option('db', 'sqlite');
const parts = option('part', 'channels,check').split(',');
const CHANNELS = Number(option('channels', '10000'));
const CONTENTS = Number(option('contents', '100000'));
const RUNS = Number(option('runs', '20'));
/** A folder for the service's CPU profile (node --cpu-prof), written when it stops. */
const PROFILE = option('profile', '');
const API_KEY = `bench-write-surface-${'k'.repeat(24)}`;

async function database(name: string) {
  if (provider === 'postgresql') {
    const admin = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
    const { default: pg } = await import('pg');
    const onAdmin = async (sql: string) => {
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      await client.query(sql);
      await client.end();
    };
    const db = `bench_surface_${name}_${process.pid}`;
    await onAdmin(`DROP DATABASE IF EXISTS ${db}`);
    await onAdmin(`CREATE DATABASE ${db}`);
    return {
      url: admin.replace(/\/[^/]*$/, `/${db}`),
      drop: () => onAdmin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-surface-'));
  return {
    url: `file:${join(dir, 'cms.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The built service (`node dist/src/main.js`, as `npm start` runs it) in a child process with one
 * process (`WORKERS=0`), in production mode, on the prepared database.
 */
async function serve(url: string, root: string) {
  const port = await freePort();
  const started = startProcess(
    process.execPath,
    [...(PROFILE === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`]), 'dist/src/main.js'],
    {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: url,
      WORKERS: '0',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      CMS_SECRET: 'bench-secret-that-is-at-least-32-characters',
      REDIS_URL: '',
    },
    root,
  );
  const base = `http://127.0.0.1:${port}`;
  await waitForAnswer(`${base}/api/v1/ping`, started, performance.now());
  const pid = started.child.pid as number;
  return { base, cpuMs: () => cpuMsOf(pid), close: () => stopProcess(started) };
}

/** The CPU time a process has used (user + system), from /proc, in milliseconds (10 ms steps). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

interface Timings {
  /** Wall-clock milliseconds per request, sorted. */
  wall: number[];
  /**
   * The service process's CPU milliseconds per request (10 ms steps), sorted: what other processes'
   * load on a shared machine inflates less than the wall clock. A PostgreSQL server's own work is
   * not in it.
   */
  cpu: number[];
}

/** Times `request` RUNS times after two warm-up calls; `before` runs, untimed, before each. */
async function timed(
  cpuMs: () => number,
  request: () => Promise<void>,
  before: () => Promise<void> = async () => {},
): Promise<Timings> {
  for (let i = 0; i < 2; i++) {
    await before();
    await request();
  }
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    await before();
    const used = cpuMs();
    const start = performance.now();
    await request();
    wall.push(performance.now() - start);
    cpu.push(cpuMs() - used);
  }
  const ascending = (a: number, b: number) => a - b;
  return { wall: wall.sort(ascending), cpu: cpu.sort(ascending) };
}

function summary(label: string, { wall, cpu }: Timings) {
  const at = (times: number[], q: number) =>
    times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)] ?? Number.NaN;
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const load = loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  console.log(
    `${provider} ${label}: p50 ${ms(at(wall, 0.5))}, p99 ${ms(at(wall, 0.99))}, min ${ms(wall[0] ?? Number.NaN)}, ` +
      `max ${ms(wall.at(-1) ?? Number.NaN)}; CPU p50 ${ms(at(cpu, 0.5))}, min ${ms(cpu[0] ?? Number.NaN)} ` +
      `(${wall.length} runs; load average ${load})`,
  );
}

/** A tree of `count` channels: root, 20 sections, 10 subsections each, the rest below at random. */
export function channelTree(count: number) {
  const next = seededRandom(17);
  const channels = [{ id: SITE_ID, parentId: 0, depth: 0, taxis: 0 }];
  const add = (parent: { id: number; depth: number }) =>
    channels.push({
      id: channels.length + 1,
      parentId: parent.id,
      depth: parent.depth + 1,
      taxis: Math.floor(next() * 1000),
    });
  for (let i = 0; i < 20 && channels.length < count; i++) add(channels[0]!);
  for (let s = 1; s <= 20 && channels.length < count; s++)
    for (let i = 0; i < 10 && channels.length < count; i++) add(channels[s]!);
  while (channels.length < count) {
    const parent = channels[21 + Math.floor(next() * (channels.length - 21))]!;
    if (parent.depth < 5) add(parent);
  }
  return channels;
}

async function listChannelsPart() {
  const place = await database('channels');
  try {
    await applyMigrations(place.url);
    const handle = await createDb(place.url);
    const tree = channelTree(CHANNELS);
    const start = performance.now();
    await importDocument(handle, {
      sites: [{ id: SITE_ID, siteDir: 'bench', siteName: 'Bench', isRoot: true }],
      channels: tree.map(({ id, parentId, taxis }) => ({
        id,
        siteId: SITE_ID,
        parentId,
        taxis,
        channelName: `Channel ${id}`,
        indexName: `c${id}`,
      })),
      apiKeys: [{ title: 'bench', key: API_KEY, scopes: [...SCOPES] }],
      contents: Array.from({ length: 2000 }, (_, i) => ({
        id: i + 1,
        siteId: SITE_ID,
        channelId: 1 + ((i * 7919) % CHANNELS),
        title: `Content ${i + 1}`,
        checkedLevel: i % 3 === 0 ? 0 : 1,
      })),
    });
    console.log(
      `${provider}: ${CHANNELS} channels imported in ${((performance.now() - start) / 1000).toFixed(1)} s`,
    );
    await handle.db.$disconnect();
    for (const root of ROOTS) {
      const service = await serve(place.url, root);
      let bytes = 0;
      let etag: string | undefined;
      // The body's bytes are counted, not decoded: the client shares the service's process.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const list = (ifNoneMatch?: string) =>
        new Promise<void>((resolve, reject) => {
          get(
            `${service.base}/api/v1/channels/${SITE_ID}`,
            {
              agent,
              headers: {
                'X-SS-API-KEY': API_KEY,
                ...(ifNoneMatch === undefined ? {} : { 'If-None-Match': ifNoneMatch }),
              },
            },
            (res) => {
              let received = 0;
              res.on('data', (chunk: Buffer) => {
                received += chunk.length;
              });
              res.on('end', () => {
                bytes = received;
                const header = res.headers.etag;
                etag = typeof header === 'string' ? header : undefined;
                if (res.statusCode === 200 || (ifNoneMatch !== undefined && res.statusCode === 304))
                  resolve();
                else reject(new Error(`listChannels answered ${res.statusCode}`));
              });
              res.on('error', reject);
            },
          ).on('error', reject);
        });
      const write = async (path: string, body: unknown) => {
        const response = await fetch(`${service.base}/api/v1/${path}/actions/update`, {
          method: 'POST',
          headers: { 'X-SS-API-KEY': API_KEY, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
      };
      // Called once a scenario has run: `bytes` is its last answer's.
      const label = (what: string) =>
        `listChannels of ${CHANNELS} channels (${(bytes / 1e6).toFixed(1)} MB)${what}, ${root}`;
      // The same list again and again (what a client polling the tree without a validator costs).
      const again = await timed(service.cpuMs, () => list());
      summary(label(''), again);
      // With the ETag of the last answer: 304 where the service gives one (200 where it does not).
      const conditional = await timed(service.cpuMs, () => list(etag));
      summary(label(' with If-None-Match'), conditional);
      // After a write of one content's title (a change the list does not show), each time.
      let n = 0;
      const untouched = await timed(
        service.cpuMs,
        () => list(),
        () => write(`contents/${SITE_ID}/1/1`, { title: `Content 1 (${++n})` }),
      );
      summary(label(' after a content title write'), untouched);
      // After a write of one channel (a change the list shows), each time: the list built again.
      const rebuilt = await timed(
        service.cpuMs,
        () => list(),
        () => write(`channels/${SITE_ID}/2`, { channelName: `Channel 2 (${++n})` }),
      );
      summary(label(' after a channel write'), rebuilt);
      agent.destroy();
      await service.close();
    }
  } finally {
    await place.drop();
  }
}

async function checkPart() {
  const place = await database('check');
  const dir = mkdtempSync(join(tmpdir(), 'bench-surface-file-'));
  try {
    await applyMigrations(place.url);
    const handle = await createDb(place.url);
    const file = join(dir, 'contents.json');
    const start = performance.now();
    await writeImportFile(file, { contents: CONTENTS, seed: 42, apiKey: API_KEY });
    const size = statSync(file).size;
    await importFrom(
      handle,
      streamSource(() => createReadStream(file, { highWaterMark: 1 << 20 }), size),
    );
    console.log(
      `${provider}: ${CONTENTS} contents generated and imported in ${((performance.now() - start) / 1000).toFixed(1)} s`,
    );
    // 1,000 contents spread over the table and its channels.
    const targets = await handle.db.content.findMany({
      where: {
        siteId: SITE_ID,
        recycled: false,
        id: { in: Array.from({ length: 1000 }, (_, i) => 1 + i * Math.floor(CONTENTS / 1000)) },
      },
      select: { id: true, channelId: true },
    });
    await handle.db.$disconnect();
    for (const root of ROOTS) {
      const service = await serve(place.url, root);
      let approve = false;
      const times = await timed(service.cpuMs, async () => {
        approve = !approve;
        const response = await fetch(`${service.base}/api/v1/contents/actions/check`, {
          method: 'POST',
          headers: { 'X-SS-API-KEY': API_KEY, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            siteId: SITE_ID,
            contents: targets.map(({ id, channelId }) => ({ id, channelId })),
            checked: approve,
            reasons: approve ? '' : 'bench',
          }),
        });
        const body = await response.text();
        if (response.status !== 200) throw new Error(`checkContents answered ${response.status}: ${body}`);
      });
      summary(`checkContents of ${targets.length} contents among ${CONTENTS}, ${root}`, times);
      await service.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await place.drop();
  }
}

for (const root of ROOTS)
  if (!existsSync(join(root, 'dist/src/main.js')))
    throw new Error(`${root}/dist/ is missing: npm run build first`);
if (parts.includes('channels')) await listChannelsPart();
if (parts.includes('check')) await checkPart();
process.exit(0);
