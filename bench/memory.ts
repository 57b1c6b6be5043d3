import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { WORKER_MALLOC_ENVIRONMENT } from '../src/supervisor.ts';
import { NEWS_CHANNEL_ID, SITE_ID, writeImportFile } from './generate.ts';
import { drain, runLoad, type Target } from './load.ts';
import {
  freePort,
  type MemoryPeak,
  sampleMemory,
  startProcess,
  stopProcess,
  waitForAnswer,
} from './processes.ts';
import { type HttpRequest, type ScenarioName, serviceRequest } from './scenarios.ts';
import type { ScenarioParams } from './sql.ts';

/*
 * `npm run build && npx tsx bench/memory.ts`: one memory figure for every way the service runs
 * (issue 20 §3). The CLI imports MEMORY_CONTENTS (default 20,000) generated contents into a new
 * SQLite file and exports them again (`node dist/src/cli/main.js`, the container image's form); the
 * service is started as production starts it (the documented commands of
 * docs/operating/build-and-start.md, no npm in front) with WORKERS=0, 1 and 2 (the default) and loaded, 10
 * connections (one for the sandbox, a caller's share), MEMORY_SECONDS (default 5) per request kind: get-by-id, the list's first page, a
 * filtered deep page, template-tag contents, stl/sqlContents (each worker then starts its SQL
 * sandbox process), updates and a 200-record page (MEMORY_MODES=0,1 runs only those modes and no
 * export). The peak RSS of every process of the tree
 * (supervisor, workers, sandbox children), sampled every 100 ms, goes to the table. Figures:
 * bench/MEMORY.md.
 */

const ROOT = process.cwd();
const CONTENTS = Number(process.env.MEMORY_CONTENTS ?? 20000);
const SECONDS = Number(process.env.MEMORY_SECONDS ?? 5);
/**
 * MEMORY_MODES=0 (a comma-separated list of WORKERS values): only those services, and no export.
 * Each value must be a whole number: an empty or mistyped list stops the run, rather than measuring
 * a mode nobody asked for.
 */
const ASKED_MODES = process.env.MEMORY_MODES;
/** MEMORY_NODE_FLAGS="--no-maglev …": node flags after the documented ones (which they override), for trials. */
const EXTRA_NODE_FLAGS = (process.env.MEMORY_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const MODES = (ASKED_MODES ?? '0,1,2').split(',').map((mode) => {
  if (!/^\s*\d+\s*$/.test(mode)) throw new Error(`MEMORY_MODES: '${mode}' is not a WORKERS value (0, 1, 2…)`);
  return Number(mode);
});
const work = join(ROOT, '.tmp', `memory-${process.pid}`);
const apiKey = randomBytes(24).toString('hex');
const MiB = 1024 * 1024;

interface Figure {
  mode: string;
  peak: MemoryPeak;
  /** The service's: each request kind's peak of its largest process (the worker, or the one process). */
  byKind?: [string, number][];
}

const largestOf = (peak: MemoryPeak) => Math.max(...peak.processes.map((process) => process.rssBytes));

function describe(peak: MemoryPeak): string {
  return peak.processes
    .filter((process) => process.rssBytes > 0)
    .map((process) => `${process.name}${process.worker ? '*' : ''} ${Math.round(process.rssBytes / MiB)}`)
    .join(', ');
}

/** The CLI, compiled, as the documented command runs it; its peak RSS while it runs. */
async function cli(args: string[], url: string): Promise<MemoryPeak> {
  const started = startProcess(
    process.execPath,
    ['dist/src/cli/main.js', ...args],
    // As the container image runs it: with the workers' malloc settings (Dockerfile).
    { ...WORKER_MALLOC_ENVIRONMENT, ...process.env, DATABASE_URL: url, NODE_ENV: 'production' },
    ROOT,
  );
  const memory = sampleMemory(started.child.pid as number, 100);
  const code = await new Promise<number | null>((resolve) => started.child.once('exit', resolve));
  const peak = memory.stop();
  if (code !== 0) throw new Error(`cms ${args[0]} exited with ${code}:\n${started.output()}`);
  return peak;
}

function paramsOf(url: string): ScenarioParams {
  const db = new Database(url.slice('file:'.length), { readonly: true });
  try {
    const contentId = Math.ceil(CONTENTS / 2);
    const row = db.prepare('SELECT "channelId", "title" FROM "Content" WHERE "id" = ?').get(contentId) as {
      channelId: number;
      title: string;
    };
    return {
      siteId: SITE_ID,
      perPage: 30,
      contentId,
      contentChannelId: row.channelId,
      updateTitle: row.title,
      subtreeId: NEWS_CHANNEL_ID,
      word: 'market',
      deepPage: 20,
      stlChannelId: NEWS_CHANNEL_ID,
      stlTotal: 30,
      hitsContentId: 0,
      hitsChannelId: 0,
    };
  } finally {
    db.close();
  }
}

function requests(params: ScenarioParams): [string, HttpRequest][] {
  const named: ScenarioName[] = ['get-one', 'list-page1', 'filtered-deep', 'stl-contents', 'update'];
  return [
    ...named.map((name) => [name, serviceRequest(name, params)] as [string, HttpRequest]),
    [
      'stl/sqlContents',
      {
        method: 'GET',
        path: `/api/v1/stl/sqlContents?${new URLSearchParams({ queryString: 'SELECT id, siteName FROM siteserver_Site' })}`,
      },
    ],
    [
      'list of 200',
      { method: 'POST', path: '/api/v1/contents', body: JSON.stringify({ siteId: SITE_ID, perPage: 200 }) },
    ],
  ];
}

async function serve(
  mode: number,
  url: string,
  params: ScenarioParams,
): Promise<Pick<Figure, 'peak' | 'byKind'>> {
  const port = await freePort();
  // The documented production commands (docs/operating/build-and-start.md): with WORKERS=0 the
  // one process takes the workers' settings from its command line and environment.
  const flags =
    mode === 0
      ? [
          '--max-semi-space-size=4',
          '--wasm-lazy-compilation',
          '--no-wasm-tier-up',
          '--heap-growing-percent=30',
        ]
      : ['--max-semi-space-size=4'];
  const started = startProcess(
    process.execPath,
    [...flags, ...EXTRA_NODE_FLAGS, 'dist/src/main.js'],
    {
      // With WORKERS=0 the documented command's malloc settings; the supervisor gives its workers the same.
      ...(mode === 0 && WORKER_MALLOC_ENVIRONMENT),
      ...process.env,
      PORT: String(port),
      DATABASE_URL: url,
      WORKERS: String(mode),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      CMS_SECRET: 'bench-secret-that-is-at-least-32-characters',
      REDIS_URL: '',
    },
    ROOT,
  );
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitForAnswer(`${base}/api/v1/ping`, started, performance.now());
    const memory = sampleMemory(started.child.pid as number, 100);
    const target: Target = { base, headers: { 'x-ss-api-key': apiKey }, pathOf: (request) => request.path };
    const byKind: [string, number][] = [];
    for (const [name, request] of requests(params)) {
      const kind = sampleMemory(started.child.pid as number, 100);
      // One caller's share of the SQL sandbox is a query at a time (more are answered 429).
      const connections = name === 'stl/sqlContents' ? 1 : 10;
      const figures = await runLoad(target, name, request, connections, SECONDS);
      await drain(target, name, request);
      if (figures.non2xx + figures.errors > 0)
        throw new Error(`${name} on WORKERS=${mode}: ${figures.non2xx} non-2xx, ${figures.errors} errors`);
      // The process that serves: the one started (WORKERS=0) or a worker; not the sandbox's child.
      const serving = kind.stop();
      serving.processes = serving.processes.filter((process) =>
        mode === 0 ? process.pid === started.child.pid : process.worker,
      );
      byKind.push([name, largestOf(serving)]);
    }
    return { peak: memory.stop(), byKind };
  } finally {
    await stopProcess(started);
  }
}

async function main() {
  mkdirSync(work, { recursive: true });
  const file = join(work, 'contents.json');
  const dbFile = join(work, 'memory.db');
  const url = `file:${dbFile}`;
  const figures: Figure[] = [];
  try {
    await writeImportFile(file, { contents: CONTENTS, seed: 42, apiKey });
    // The tool imports only into a database that exists: an empty file is an empty SQLite database.
    writeFileSync(dbFile, '');
    figures.push({ mode: `cms import (${CONTENTS} contents)`, peak: await cli(['import', file], url) });
    const params = paramsOf(url);
    for (const mode of MODES) {
      figures.push({ mode: `service, WORKERS=${mode}`, ...(await serve(mode, url, params)) });
    }
    if (ASKED_MODES === undefined)
      figures.push({ mode: 'cms export', peak: await cli(['export', join(work, 'export.json')], url) });
    console.log(
      `### ${CONTENTS} contents, SQLite, ${SECONDS} s per request kind; load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}\n`,
    );
    console.log(
      '| mode | peak RSS, all processes (MiB) | largest process (MiB) | every process: peak MiB (* a worker) |',
    );
    console.log('|---|---:|---:|---|');
    for (const { mode, peak } of figures) {
      console.log(
        `| ${mode} | ${Math.round(peak.totalBytes / MiB)} | ${Math.round(largestOf(peak) / MiB)} | ${describe(peak)} |`,
      );
    }
    const services = figures.filter((figure) => figure.byKind !== undefined);
    console.log(
      `\nThe serving process's peak (MiB) per request kind (WORKERS=0: the one process; else the larger worker):\n`,
    );
    console.log(`| request kind | ${services.map((figure) => figure.mode).join(' | ')} |`);
    console.log(`|---|${services.map(() => '---:').join('|')}|`);
    for (const [index, [name]] of (services[0]?.byKind ?? []).entries()) {
      const cells = services.map((figure) => Math.round((figure.byKind?.[index]?.[1] ?? 0) / MiB));
      console.log(`| ${name} | ${cells.join(' | ')} |`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
