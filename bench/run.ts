import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { hostileBody, startAnonymousSenders } from './anonymous.ts';
import type { FloorsConfig } from './floors.ts';
import { COMMON_WORD, NEWS_CHANNEL_ID, SITE_ID, writeImportFile } from './generate.ts';
import { drain, type LoadFigures, measureLoad, requestHeaders, runLoad, type Target } from './load.ts';
import {
  freePort,
  type MemoryPeak,
  type Started,
  sampleMemory,
  startProcess,
  stopProcess,
  waitForAnswer,
} from './processes.ts';
import {
  type AnonymousResult,
  type DatabaseResult,
  formatDatabase,
  type Measurement,
  type RoundFigures,
  roundsOf,
  type ScenarioResult,
  type TargetName,
} from './report.ts';
import { type GrowthFigures, medianRound, p50Ratio, roundRatio, secondsPerRound } from './rounds.ts';
import {
  answerIds,
  type HttpRequest,
  rowsPageOf,
  SCENARIOS,
  type ScenarioName,
  sameCreate,
  sameHits,
  serviceRequest,
  UPDATE_READS,
} from './scenarios.ts';
import { floorQueries, openSql, type Provider, type ScenarioParams } from './sql.ts';

/*
 * `npm run bench [-- options]`: the service, started as users start it (`npm start`, production mode),
 * loaded over HTTP by autocannon from this process, next to floors measured in the same run on the
 * same data with the same concurrency (see bench/README.md for what each figure means).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    contents: { type: 'string' },
    db: { type: 'string', default: 'sqlite,postgresql' },
    seconds: { type: 'string' },
    connections: { type: 'string', default: '10' },
    workers: { type: 'string', default: process.env.WORKERS ?? '1' },
    growth: { type: 'string' },
    million: { type: 'boolean', default: false },
    seed: { type: 'string', default: '42' },
    out: { type: 'string' },
    scenarios: { type: 'string' },
    readers: { type: 'string' },
    rounds: { type: 'string' },
  },
});

const quick = options.quick;
const contents = Number(options.contents ?? (quick ? 1000 : 100000));
const seconds = Number(options.seconds ?? (quick ? 0.5 : 10));
// Quick mode proves the benchmark works, no more: no warm-up, one round of a second, no growth.
const warmupSeconds = quick ? 0 : 2;
/** A further size's service warms up this many times as long before the growth's rounds. */
const GROWTH_WARMUP_RUNS = 5;
// A scenario's targets are measured in alternated rounds (service, each floor; again…), each round
// of a target `seconds / rounds` long: a ratio is read from rounds taken close together in time.
const rounds = Number(options.rounds ?? (quick ? 1 : 5));
const roundSeconds = secondsPerRound(seconds, rounds);
const connections = Number(options.connections);
// Connections reading the default list beside the write scenarios' one writer; 0: the write alone.
const readers = Number(options.readers ?? Math.max(1, connections - 1));
const seed = Number(options.seed);
const providers = options.db.split(',').map((p) => p.trim()) as Provider[];
// Sizes for the growth of the default list's p50; the main size is always one of them.
const growthSizes = (options.growth ? options.growth.split(',').map(Number) : quick ? [] : [10000]).filter(
  (n) => n !== contents,
);
const postgresServer = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const apiKey = randomBytes(24).toString('hex');
const work = join(ROOT, '.tmp', `bench-${process.pid}`);
const cleanups: (() => Promise<void> | void)[] = [];

for (const p of providers)
  if (p !== 'sqlite' && p !== 'postgresql') throw new Error(`--db: unknown database ${p}`);
// --scenarios a,b: only those scenarios' runs (in the usual order); the rest of a database's
// measurement (the hostile senders, the growth) stays as it is.
const selected: ScenarioName[] = options.scenarios
  ? SCENARIOS.filter((name) =>
      options
        .scenarios!.split(',')
        .map((n) => n.trim())
        .includes(name),
    )
  : SCENARIOS;
for (const name of options.scenarios?.split(',') ?? [])
  if (!SCENARIOS.includes(name.trim() as ScenarioName))
    throw new Error(`--scenarios: unknown scenario ${name}`);

function log(line: string) {
  process.stderr.write(`[bench] ${line}\n`);
}

/** The import file of a size, generated once per run. */
const importFiles = new Map<number, string>();
async function importFile(size: number): Promise<string> {
  let file = importFiles.get(size);
  if (!file) {
    file = join(work, `contents-${size}.json`);
    const start = performance.now();
    await writeImportFile(file, { contents: size, seed, apiKey });
    log(`generated ${size} contents in ${((performance.now() - start) / 1000).toFixed(1)} s`);
    importFiles.set(size, file);
  }
  return file;
}

function runCommand(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const started = startProcess('npm', args, { ...process.env, ...env }, ROOT);
  return new Promise((resolvePromise, reject) => {
    started.child.once('exit', (code) =>
      code === 0
        ? resolvePromise()
        : reject(new Error(`npm ${args.join(' ')} failed (${code}):\n${started.output()}`)),
    );
  });
}

interface PreparedDatabase {
  url: string;
  naiveUrl: string;
  importSeconds: number;
}

/** A fresh database loaded through the CLI users have, and its naive copy (PK + (siteId, channelId) only). */
async function prepareDatabase(
  provider: Provider,
  size: number,
  withNaive: boolean,
): Promise<PreparedDatabase> {
  const file = await importFile(size);
  let url: string;
  let naiveUrl = '';
  const tag = `${size}_${randomBytes(4).toString('hex')}`;
  if (provider === 'sqlite') {
    url = `file:${join(work, `bench-${tag}.db`)}`;
    // The tool imports only into a database that exists: an empty file is an empty SQLite database.
    writeFileSync(join(work, `bench-${tag}.db`), '');
  } else {
    const name = `bench_${tag}`;
    await onPostgres(`CREATE DATABASE "${name}"`);
    cleanups.push(() => onPostgres(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    url = withDatabase(name);
  }
  const start = performance.now();
  await runCommand(['run', '--silent', 'cms', '--', 'import', file], { DATABASE_URL: url });
  const importSeconds = (performance.now() - start) / 1000;
  log(`${provider}: imported ${size} contents with \`cms import\` in ${importSeconds.toFixed(1)} s`);
  if (withNaive) {
    if (provider === 'sqlite') {
      const path = join(work, `naive-${tag}.db`);
      const db = new Database(url.slice('file:'.length));
      db.prepare('VACUUM INTO ?').run(path);
      db.close();
      const naive = new Database(path);
      const indexes = naive
        .prepare(
          `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Content' AND sql IS NOT NULL`,
        )
        .all() as { name: string }[];
      for (const { name } of indexes) naive.exec(`DROP INDEX "${name}"`);
      naive.exec('CREATE INDEX "naive_site_channel" ON "Content"("siteId", "channelId"); ANALYZE;');
      naive.close();
      naiveUrl = `file:${path}`;
    } else {
      const name = `bench_naive_${tag}`;
      await onPostgres(`CREATE DATABASE "${name}" TEMPLATE "bench_${tag}"`);
      cleanups.push(() => onPostgres(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
      naiveUrl = withDatabase(name);
      const client = new pg.Client({ connectionString: naiveUrl });
      await client.connect();
      const { rows } = await client.query<{ indexname: string }>(
        `SELECT indexname FROM pg_indexes WHERE tablename = 'Content' AND indexname <> 'Content_pkey'`,
      );
      for (const { indexname } of rows) await client.query(`DROP INDEX "${indexname}"`);
      await client.query('CREATE INDEX "naive_site_channel" ON "Content"("siteId", "channelId")');
      await client.query('ANALYZE');
      await client.end();
    }
  }
  return { url, naiveUrl, importSeconds };
}

function withDatabase(name: string): string {
  const url = new URL(postgresServer);
  url.pathname = `/${name}`;
  return url.toString();
}

async function onPostgres(sql: string) {
  const client = new pg.Client({ connectionString: postgresServer });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

interface Service {
  started: Started;
  port: number;
  startToFirstAnswerMs: number;
  memory: ReturnType<typeof sampleMemory>;
}

/** `npm start` as a user runs it, in production mode, with the rate limit off. */
async function startService(url: string, attempt = 1): Promise<Service> {
  const port = await freePort();
  const since = performance.now();
  const started = startProcess(
    'npm',
    ['start'],
    {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: url,
      WORKERS: options.workers,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      CMS_SECRET: 'bench-secret-that-is-at-least-32-characters',
      REDIS_URL: '',
    },
    ROOT,
  );
  cleanups.push(() => stopProcess(started));
  try {
    const startToFirstAnswerMs = await waitForAnswer(`http://127.0.0.1:${port}/api/v1/ping`, started, since);
    return { started, port, startToFirstAnswerMs, memory: sampleMemory(started.child.pid!) };
  } catch (error) {
    // Another process on this shared machine may take the port between the check and the bind.
    if (attempt < 3 && started.output().includes('EADDRINUSE')) return startService(url, attempt + 1);
    throw error;
  }
}

async function startFloors(config: FloorsConfig, first: ScenarioName): Promise<Started> {
  const file = join(work, `floors-${randomBytes(4).toString('hex')}.json`);
  writeFileSync(file, JSON.stringify(config));
  const started = startProcess(
    join(ROOT, 'node_modules/.bin/tsx'),
    ['bench/floors.ts', file],
    process.env,
    ROOT,
  );
  cleanups.push(() => stopProcess(started));
  await waitForAnswer(`http://127.0.0.1:${config.ports.A}/${first}`, started, performance.now());
  return started;
}

/** The values the scenarios use, read from the data (the deep page shrinks on small data sets). */
async function scenarioParams(url: string, size: number): Promise<ScenarioParams> {
  const sql = openSql(url, 1);
  try {
    const contentId = Math.ceil(size / 2);
    const [row] = await sql.all(
      {
        sqlite: 'SELECT "channelId", "title" FROM "Content" WHERE "id" = ?',
        postgresql: 'SELECT "channelId", "title" FROM "Content" WHERE "id" = $1',
      },
      [contentId],
    );
    const perPage = 30;
    const params: ScenarioParams = {
      siteId: SITE_ID,
      perPage,
      contentId,
      contentChannelId: Number(row!.channelId),
      updateTitle: String(row!.title),
      subtreeId: NEWS_CHANNEL_ID,
      word: COMMON_WORD,
      deepPage: 1,
      stlChannelId: NEWS_CHANNEL_ID,
      stlTotal: perPage,
      hitsContentId: 0,
      hitsChannelId: 0,
    };
    // The first approved content outside the News subtree (stl-contents orders that by hits).
    const [viewed] = await sql.all(
      {
        sqlite: `WITH RECURSIVE "news"("id") AS (SELECT ? UNION ALL
          SELECT c."id" FROM "Channel" c JOIN "news" n ON c."parentId" = n."id")
          SELECT "id", "channelId" FROM "Content" WHERE "siteId" = ? AND "checked" = 1 AND "recycled" = 0
          AND "channelId" NOT IN (SELECT "id" FROM "news") ORDER BY "id" LIMIT 1`,
        postgresql: `WITH RECURSIVE "news"("id") AS (SELECT $1::int UNION ALL
          SELECT c."id" FROM "Channel" c JOIN "news" n ON c."parentId" = n."id")
          SELECT "id", "channelId" FROM "Content" WHERE "siteId" = $2 AND "checked" AND NOT "recycled"
          AND "channelId" NOT IN (SELECT "id" FROM "news") ORDER BY "id" LIMIT 1`,
      },
      [NEWS_CHANNEL_ID, SITE_ID],
    );
    params.hitsContentId = Number(viewed!.id);
    params.hitsChannelId = Number(viewed!.channelId);
    const { totalCount } = await floorQueries(sql, params).filteredDeep();
    params.deepPage = Math.max(1, Math.min(200, Math.ceil(totalCount / perPage)));
    return params;
  } finally {
    await sql.close();
  }
}

async function fetchBody(base: string, path: string, request: HttpRequest, headers: Record<string, string>) {
  const response = await fetch(`${base}${path}`, {
    method: request.method,
    headers: requestHeaders({ headers }, request),
    ...(request.body ? { body: request.body } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${request.method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  // A compressed scenario measures nothing if an answer comes uncompressed (fetch decodes it).
  const asked = request.headers?.['accept-encoding'];
  const coding = response.headers.get('content-encoding');
  if (asked !== undefined && coding !== asked)
    throw new Error(
      `${request.method} ${base}${path}: asked for ${asked}, answered ${coding ?? 'uncompressed'}`,
    );
  return text;
}

function compare(name: string, a: string, b: string): { ok: boolean; detail: string } {
  const x = answerIds(JSON.parse(a));
  const y = answerIds(JSON.parse(b));
  const same =
    x.total === y.total && x.ids.length === y.ids.length && x.ids.every((id, i) => id === y.ids[i]);
  const total = x.total === undefined ? '' : `, total ${x.total}`;
  return same
    ? { ok: true, detail: `${x.ids.length} ids${total}` }
    : {
        ok: false,
        detail: `${name}: [${x.ids.slice(0, 5)}…] total ${x.total} vs [${y.ids.slice(0, 5)}…] total ${y.total}`,
      };
}

async function measureDatabase(provider: Provider): Promise<DatabaseResult> {
  const db = await prepareDatabase(provider, contents, true);
  const params = await scenarioParams(db.url, contents);
  const service = await startService(db.url);
  log(
    `${provider}: service answered ${(service.startToFirstAnswerMs / 1000).toFixed(2)} s after \`npm start\``,
  );
  const serviceTarget: Target = {
    base: `http://127.0.0.1:${service.port}`,
    headers: { 'x-ss-api-key': apiKey },
    pathOf: (request) => request.path,
  };
  // The service's own answers: what floors A and B send back, and one side of the guard.
  const bodies: Partial<Record<ScenarioName, string>> = {};
  // The create first: the content it adds is then in every other answer, and in floor C's too.
  // The writes' readers read UPDATE_READS from every target, which serve only the bodies captured.
  const writes = selected.some((scenario) => scenario === 'update' || scenario === 'create');
  const captured = [
    ...selected.filter((scenario) => scenario === 'create'),
    ...selected.filter((scenario) => scenario !== 'create'),
    ...(writes && readers > 0 && !selected.includes(UPDATE_READS) ? [UPDATE_READS] : []),
  ];
  for (const name of captured) {
    const request = serviceRequest(name, params);
    bodies[name] = await fetchBody(serviceTarget.base, request.path, request, serviceTarget.headers);
  }
  const ports = {
    A: await freePort(),
    B: await freePort(),
    C: await freePort(),
    D: await freePort(),
    R: await freePort(),
  };
  const floors = await startFloors(
    { ports, databaseUrl: db.url, naiveUrl: db.naiveUrl, params, bodies },
    selected[0]!,
  );
  const floorTarget = (port: number): Target => ({
    base: `http://127.0.0.1:${port}`,
    headers: {},
    pathOf: (_request, scenario) => `/${scenario}`,
  });
  const targets: [TargetName, Target][] = [
    ['service', serviceTarget],
    ['A node:http', floorTarget(ports.A)],
    ['B express', floorTarget(ports.B)],
    ['C sql', floorTarget(ports.C)],
  ];

  const scenarios: ScenarioResult[] = [];
  for (const name of selected) {
    const request = serviceRequest(name, params);
    const floorC = await fetchBody(floorTarget(ports.C).base, `/${name}`, request, {});
    let guard =
      name === 'create'
        ? sameCreate(JSON.parse(bodies[name]!), JSON.parse(floorC))
        : name === 'hits'
          ? sameHits(JSON.parse(bodies[name]!), JSON.parse(floorC))
          : compare('service vs C', bodies[name]!, floorC);
    // Quick mode, which proves the benchmark runs end to end, measures every scenario against the
    // SQL floors only (C, and D or R where they apply): the fixed-body floors A and B compare
    // nothing of the service's work, and autocannon runs a target at least a whole second, so that
    // each of them costs a second a scenario (the quick run stays under CI's 2 minutes).
    const list: [TargetName, Target][] = quick
      ? targets.filter(([targetName]) => targetName === 'service' || targetName === 'C sql')
      : [...targets];
    if (name === 'filtered-deep') {
      const floorD = await fetchBody(floorTarget(ports.D).base, `/${name}`, request, {});
      const naive = compare('D vs C', floorD, floorC);
      if (!naive.ok) guard = naive;
      list.push(['D naive sql', floorTarget(ports.D)]);
    }
    if (rowsPageOf(name) !== undefined) {
      const floorR = await fetchBody(floorTarget(ports.R).base, `/${name}`, request, {});
      const rows = compare('R vs C', floorR, floorC);
      if (!rows.ok) guard = rows;
      list.push(['R rows', floorTarget(ports.R)]);
    }
    log(`${provider} ${name}: guard ${guard.ok ? 'ok' : 'MISMATCH'} (${guard.detail})`);
    // Round after round, every target of the list in turn: the service, then the scenario's own
    // floor (the last of the list: R for a list page, D for the filtered deep page, C otherwise)
    // right after it, so that the ratio the scenario is read by pairs the closest rounds, then the
    // other floors.
    const measured = list.map(() => ({ rounds: [] as RoundFigures[], peaks: [] as MemoryPeak[] }));
    const order = [...new Set([0, list.length - 1, ...list.keys()])];
    for (let round = 0; round < rounds; round++) {
      for (const i of order) {
        const [targetName, target] = list[i]!;
        const { figures, memory } = await measureRound(name, request, target, params, {
          warmUp: round === 0,
          sampled: targetName === 'service' ? service : undefined,
        });
        measured[i]!.rounds.push(figures);
        if (memory) measured[i]!.peaks.push(memory);
      }
      if (rounds > 1) {
        const svc = measured[0]!.rounds[round]!.reqPerSec;
        const ratios = list
          .slice(1)
          .map(([targetName], i) => {
            const floor = measured[i + 1]!.rounds[round]!.reqPerSec;
            return `svc/${targetName.split(' ')[0]} ${floor > 0 ? (svc / floor).toFixed(2) : '-'}`;
          })
          .join(', ');
        log(`${provider} ${name}: round ${round + 1}/${rounds}: service ${svc.toFixed(1)} req/s, ${ratios}`);
      }
    }
    const serviceRounds = measured[0]!.rounds;
    const measurements: Measurement[] = list.map(([targetName], i) => {
      const { rounds: targetRounds, peaks } = measured[i]!;
      const ratio = roundRatio(serviceRounds, targetRounds);
      return {
        target: targetName,
        ...medianRound(targetRounds),
        rounds: targetRounds,
        ...(ratio && { serviceRatio: ratio }),
        ...(peaks.length > 0 && {
          memory: {
            totalBytes: Math.max(...peaks.map((peak) => peak.totalBytes)),
            workerBytes: Math.max(...peaks.map((peak) => peak.workerBytes)),
          },
        }),
      };
    });
    scenarios.push({ scenario: name, request: `${request.method} ${request.path}`, guard, measurements });
  }
  await stopProcess(floors);
  const anonymous = await measureAnonymousSenders(serviceTarget, serviceRequest('list-page1', params));
  log(
    `${provider}: default list p50 ${anonymous.quietP50Ms} ms quiet, ${anonymous.loadedP50Ms} ms beside ` +
      `${anonymous.senders.senders} hostile anonymous senders (x${anonymous.ratio.toFixed(2)})`,
  );
  const serviceMemory = service.memory.stop();

  // The growth: each further size's service beside the main size's, still running, in alternated
  // rounds of the default list (the other size, then the main one), so that the factor is read
  // from p50s taken seconds apart, as the scenarios' ratios are.
  const listRequest = serviceRequest('list-page1', params);
  const listP50 = scenarios.find((s) => s.scenario === 'list-page1')?.measurements[0];
  const growth: GrowthFigures[] = listP50
    ? [{ contents, p50Ms: listP50.p50Ms, reqPerSec: listP50.reqPerSec, p50OverMain: 1 }]
    : [];
  const sizes = [...growthSizes, ...(options.million && provider === 'sqlite' ? [1000000] : [])];
  for (const size of listP50 ? sizes : []) {
    const small = await prepareDatabase(provider, size, false);
    const smallService = await startService(small.url);
    const request = serviceRequest('list-page1', await scenarioParams(small.url, size));
    const target = { ...serviceTarget, base: `http://127.0.0.1:${smallService.port}` };
    if (warmupSeconds > 0) {
      // Longer than a scenario's: the main size's service has run for minutes, and a new one's
      // first seconds (its code not yet optimised) would read as a smaller p50 at the main size.
      await runLoad(target, 'list-page1', request, connections, GROWTH_WARMUP_RUNS * warmupSeconds);
      await drain(target, 'list-page1', request);
    }
    const paired: { main: LoadFigures; other: LoadFigures }[] = [];
    for (let round = 0; round < rounds; round++) {
      const other = await measureLoad(target, 'list-page1', request, connections, roundSeconds);
      const main = await measureLoad(serviceTarget, 'list-page1', listRequest, connections, roundSeconds);
      paired.push({ main, other });
    }
    smallService.memory.stop();
    await stopProcess(smallService.started);
    const figures = medianRound(paired.map((pair) => pair.other));
    const p50OverMain = p50Ratio(paired);
    growth.push({
      contents: size,
      p50Ms: figures.p50Ms,
      reqPerSec: figures.reqPerSec,
      ...(p50OverMain !== undefined && { p50OverMain }),
    });
    log(
      `${provider}: default list at ${size} contents, p50 ${figures.p50Ms} ms; ` +
        `p50 over ${contents} contents' round by round: ${paired.map((p) => `${p.other.p50Ms}/${p.main.p50Ms}`).join(', ')}`,
    );
  }
  await stopProcess(service.started);
  growth.sort((a, b) => a.contents - b.contents);
  return {
    provider,
    contents,
    importSeconds: db.importSeconds,
    startToFirstAnswerMs: service.startToFirstAnswerMs,
    deepPage: params.deepPage,
    filteredTotal: bodies['filtered-deep'] ? (answerIds(JSON.parse(bodies['filtered-deep'])).total ?? 0) : 0,
    serviceMemory,
    scenarios,
    growth,
    anonymous,
  };
}

/**
 * The default list's p50 alone, then beside ANONYMOUS_SENDERS clients without credentials posting
 * 5 MB bodies of keys to the list (issue 15 §2; the target is under 1.5 times the quiet p50). Each
 * run lasts at least two seconds, whatever --seconds says, so that the senders' effect shows.
 */
async function measureAnonymousSenders(target: Target, request: HttpRequest): Promise<AnonymousResult> {
  const duration = Math.max(2, seconds);
  if (warmupSeconds > 0) {
    await runLoad(target, 'list-page1', request, connections, warmupSeconds);
    await drain(target, 'list-page1', request);
  }
  const quiet = await measureLoad(target, 'list-page1', request, connections, duration);
  const senders = startAnonymousSenders(`${target.base}${request.path}`, hostileBody());
  // Let every sender get going before the measured run starts.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const loaded = await measureLoad(target, 'list-page1', request, connections, duration);
  const sent = await senders.stop();
  return {
    quietP50Ms: quiet.p50Ms,
    loadedP50Ms: loaded.p50Ms,
    ratio: loaded.p50Ms / Math.max(quiet.p50Ms, 0.01),
    quiet,
    loaded,
    senders: sent,
  };
}

/**
 * One round of one target: its warm-up first (and the drain after it) when `warmUp`, then `roundSeconds`
 * measured; the service's RSS is sampled over the measured part (`sampled`).
 */
async function measureRound(
  name: ScenarioName,
  request: ReturnType<typeof serviceRequest>,
  target: Target,
  params: ScenarioParams,
  { warmUp, sampled }: { warmUp: boolean; sampled: Service | undefined },
): Promise<{ figures: RoundFigures; memory: MemoryPeak | undefined }> {
  if (name === 'update' || name === 'create') {
    // One writer connection, `readers` others read the default list at the same time.
    const reads = serviceRequest(UPDATE_READS, params);
    const both = async (duration: number) => {
      const result = await Promise.all([
        runLoad(target, name, request, 1, duration),
        readers > 0 ? runLoad(target, UPDATE_READS, reads, readers, duration) : undefined,
      ]);
      await drain(target, name, request);
      if (readers > 0) await drain(target, UPDATE_READS, reads);
      return result;
    };
    if (warmUp && warmupSeconds > 0) await both(warmupSeconds);
    const sampler = sampled ? sampleMemory(sampled.started.child.pid!) : undefined;
    const [writes, readFigures] = await both(roundSeconds);
    return { figures: { ...writes, ...(readFigures && { reads: readFigures }) }, memory: sampler?.stop() };
  }
  if (warmUp && warmupSeconds > 0) {
    await runLoad(target, name, request, connections, warmupSeconds);
    await drain(target, name, request);
  }
  const sampler = sampled ? sampleMemory(sampled.started.child.pid!) : undefined;
  const figures = await measureLoad(target, name, request, connections, roundSeconds);
  return { figures, memory: sampler?.stop() };
}

async function cleanUp() {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      log(`cleanup: ${(error as Error).message}`);
    }
  }
  rmSync(work, { recursive: true, force: true });
}

// The service and the floors run in process groups of their own, which Ctrl-C does not reach.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping what the benchmark started`);
    void cleanUp().finally(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  mkdirSync(work, { recursive: true });
  const startedAt = new Date();
  // The machine may be shared: its load at the start and the end say how far to trust the figures.
  const loadAtStart = loadavg();
  const results: DatabaseResult[] = [];
  try {
    for (const provider of providers) {
      const result = await measureDatabase(provider);
      results.push(result);
      process.stdout.write(`${formatDatabase(result)}\n`);
    }
  } finally {
    await cleanUp();
  }
  const report = {
    startedAt: startedAt.toISOString(),
    seconds: (Date.now() - startedAt.getTime()) / 1000,
    mode: quick ? 'quick' : 'full',
    settings: {
      contents,
      // --seconds: a target's measured time in all, split into `rounds` of `secondsPerRound` each.
      secondsPerRun: seconds,
      rounds,
      secondsPerRound: roundSeconds,
      warmupSeconds,
      connections,
      workers: Number(options.workers),
      seed,
    },
    machine: {
      node: process.version,
      cpus: cpus().length,
      loadAverage: { start: loadAtStart, end: loadavg() },
    },
    results,
  };
  const out =
    options.out ??
    join(
      ROOT,
      'bench',
      'results',
      `${quick ? 'quick' : 'full'}-${startedAt.toISOString().replaceAll(':', '-').slice(0, 19)}.json`,
    );
  mkdirSync(dirname(out), { recursive: true });
  // Arrays of plain values on one line, as the repository's formatter (biome) writes them, so that a
  // committed result passes `npm run lint` as written.
  const text = JSON.stringify(report, null, 2).replace(
    /\[\n\s*((?:-?[\d.e+-]+|"[^"\n]*"|true|false|null)(?:,\n\s*(?:-?[\d.e+-]+|"[^"\n]*"|true|false|null))*)\n\s*\]/g,
    (_match, items: string) => `[${items.split(/,\n\s*/).join(', ')}]`,
  );
  writeFileSync(out, `${text}\n`);
  log(
    `results: ${out} (${report.seconds.toFixed(0)} s; load average ${loadAtStart[0]!.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end, ${cpus().length} CPUs)`,
  );
  // A run whose answers differ, or that saw errors, proves nothing: it fails.
  const failures: string[] = results.flatMap((r) =>
    r.scenarios.flatMap((s) => [
      ...(s.guard.ok ? [] : [`${r.provider} ${s.scenario}: guard mismatch`]),
      // Any round's failures, not only those of the round whose figures head the measurement.
      ...s.measurements
        .filter((m) =>
          roundsOf(m).some(
            (round) =>
              round.non2xx + round.errors + (round.reads ? round.reads.non2xx + round.reads.errors : 0) > 0 ||
              round.requests === 0,
          ),
        )
        .map((m) => `${r.provider} ${s.scenario} ${m.target}: failed requests`),
    ]),
  );
  for (const r of results) {
    const { quiet, loaded, senders } = r.anonymous;
    if (quiet.non2xx + quiet.errors + loaded.non2xx + loaded.errors > 0)
      failures.push(`${r.provider} list beside anonymous senders: failed requests`);
    // Every hostile send must have been refused (401) or cut off unread; any other answer means it was let in.
    if (Object.keys(senders.statuses).some((status) => status !== '401'))
      failures.push(
        `${r.provider} anonymous senders: answers other than 401 (${JSON.stringify(senders.statuses)})`,
      );
  }
  for (const failure of failures) log(`FAILED: ${failure}`);
  return failures.length > 0 ? 1 : 0;
}

process.exit(await main());
