import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { WORKER_V8_FLAGS } from '../../src/supervisor.ts';
import { createEmptyDatabase, type EmptyDatabase, testServerUrl } from '../support/database.ts';
import { testRedisKeyPrefix } from '../support/run.ts';
import { bootstrapKeyOf, freePort, type Service, startService, stopService } from './processes.ts';

/*
 * The supervisor of `npm start` (src/supervisor.ts) with real workers on a real database: a
 * restart requested over HTTP rolls the workers under steady traffic without one failed request,
 * reaches the other nodes on the same database, a worker killed with SIGKILL is replaced, and
 * SIGTERM stops everything gracefully. Worker pids come from the supervisor's log lines.
 */

const provider = testServerUrl() ? 'postgresql' : 'sqlite';

let database: EmptyDatabase | undefined;
let services: Service[] = [];

afterEach(async () => {
  await Promise.all(services.map(stopService));
  services = [];
  await database?.drop();
  database = undefined;
});

async function serve(env: Record<string, string>): Promise<{ service: Service; port: number }> {
  const port = await freePort();
  const service = startService({ ...env, PORT: String(port) });
  services.push(service);
  return { service, port };
}

interface LogLine {
  msg?: string;
  worker?: number;
  workers?: number[];
  code?: number | null;
  signal?: string | null;
  delayMs?: number;
}

/** The supervisor's and workers' JSON log lines so far. */
function logLines(service: Service): LogLine[] {
  return service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/** The `workers` of the last line with this message. */
function workersOf(service: Service, msg: string): number[] {
  const line = logLines(service).findLast((entry) => entry.msg === msg);
  if (line?.workers === undefined) throw new Error(`no "${msg}" line:\n${service.output()}`);
  return line.workers;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, service: Service): Promise<void> {
  for (let tries = 0; !condition(); tries += 1) {
    if (tries > 1200) throw new Error(`condition not met:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const REQUEST_TIMEOUT_MS = 20_000;
/** Each test starts two or three processes per node on a shared two-core machine. */
const TEST_TIMEOUT_MS = 180_000;
jest.setTimeout(TEST_TIMEOUT_MS);

interface Answer {
  status: number;
  text: string;
}

/**
 * One request on a connection of its own. (A keep-alive client can lose a request that it sends on
 * an idle connection at the very moment the server closes it: HTTP/1.1's own race, not a restart's.)
 */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    // A request that never gets an answer is a failure to report, not a test that hangs.
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer to ${method} ${path}`)));
    req.end(body);
  });
}

const restart = (port: number, key: string) =>
  send(port, 'POST', '/api/v1/actions/restart', { 'X-SS-API-KEY': key });

/** Steady traffic: `loops` clients, each sending ping and an authenticated list, one after another. */
function traffic(port: number, key: string, loops: number) {
  const failures: string[] = [];
  let ok = 0;
  let running = true;
  const one = async (turn: number) => {
    try {
      if (turn % 2 === 0) {
        const answer = await send(port, 'GET', '/api/v1/ping', {});
        if (answer.status === 200 && answer.text === 'pong') ok += 1;
        else failures.push(`ping: ${answer.status} ${answer.text}`);
      } else {
        const body = JSON.stringify({ siteId: 1, perPage: 1 });
        const answer = await send(port, 'POST', '/api/v1/contents', { 'X-SS-API-KEY': key }, body);
        const total =
          answer.status === 200 ? (JSON.parse(answer.text) as { totalCount?: number }).totalCount : -1;
        if (total === 40) ok += 1;
        else failures.push(`contents: ${answer.status} ${answer.text}`);
      }
    } catch (error) {
      failures.push(`${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const clients = Array.from({ length: loops }, async (_, client) => {
    for (let turn = client; running; turn += 1) await one(turn);
  });
  return {
    failures,
    ok: () => ok,
    /** Resolves once `count` more requests have succeeded. */
    async advance(count: number) {
      const target = ok + count;
      while (ok < target) {
        if (failures.length > 0) throw new Error(`requests failed: ${failures.join('; ')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      running = false;
      await Promise.all(clients);
    },
  };
}

/** A worker's command line carries the V8 flags, and its environment the malloc setting. */
function expectMemorySettings(pids: number[]): void {
  expect(WORKER_V8_FLAGS).toContain('--heap-growing-percent=30');
  for (const pid of pids) {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(argv).toEqual(expect.arrayContaining(WORKER_V8_FLAGS));
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
  }
}

async function startSeeded(env: Record<string, string> = {}) {
  database = await createEmptyDatabase();
  const node = await serve({ DATABASE_URL: database.url, SEED_DEMO: 'true', WORKERS: '2', ...env });
  await node.service.waitFor(/"msg":"workers ready"/, 60_000);
  const key = bootstrapKeyOf(node.service.output());
  if (key === undefined) throw new Error(`no bootstrap key:\n${node.service.output()}`);
  return { ...node, key };
}

describe(`the supervisor on ${provider}`, () => {
  test('a restart under steady traffic replaces every worker, one at a time, with zero failed requests', async () => {
    const { service, port, key } = await startSeeded();
    const before = workersOf(service, 'workers ready');
    expect(before).toHaveLength(2);
    // Every worker, the first ones and their replacements, runs with the memory settings.
    expectMemorySettings(before);

    const load = traffic(port, key, 4);
    try {
      await load.advance(20);
      const answer = await restart(port, key);
      expect(answer).toEqual({ status: 200, text: '{"value":true}' });
      const servedWhenAnswered = load.ok();
      await service.waitFor(/"msg":"workers restarted"/, 60_000);
      const servedWhenRestarted = load.ok();
      await load.advance(20);
      // Traffic went on while the workers were being replaced.
      expect(servedWhenRestarted).toBeGreaterThan(servedWhenAnswered);
    } finally {
      await load.stop();
    }
    expect(load.failures).toEqual([]);

    const after = workersOf(service, 'workers restarted');
    expect(after).toHaveLength(2);
    expectMemorySettings(after);
    for (const pid of after) expect(before).not.toContain(pid);
    // One at a time: each old worker stopped (exit 0) only after a new one listened.
    const lines = logLines(service);
    const index = (msg: string, worker: number) =>
      lines.findIndex((line) => line.msg === msg && line.worker === worker);
    for (const [position, old] of before.entries()) {
      const successor = after[position] as number;
      expect(index('worker listening', successor)).toBeGreaterThan(-1);
      expect(index('worker stopped', old)).toBeGreaterThan(index('worker listening', successor));
      expect(lines[index('worker stopped', old)]).toMatchObject({ code: 0, signal: null });
      expect(isAlive(old)).toBe(false);
    }
  });

  test('a worker killed with SIGKILL is replaced, after a longer pause when it happens again at once; SIGTERM then lets a request in flight finish and exits 0', async () => {
    const { service, port, key } = await startSeeded();
    const [victim, survivor] = workersOf(service, 'workers ready') as [number, number];
    process.kill(victim, 'SIGKILL');
    await service.waitFor(/"msg":"worker exited unexpectedly"/);
    expect(logLines(service).find((line) => line.msg === 'worker exited unexpectedly')).toMatchObject({
      worker: victim,
      signal: 'SIGKILL',
    });
    // The other worker serves meanwhile.
    expect(await send(port, 'GET', '/api/v1/ping', {})).toEqual({ status: 200, text: 'pong' });
    const listening = () =>
      logLines(service)
        .filter((line) => line.msg === 'worker listening')
        .map((line) => line.worker);
    await until(() => listening().length === 3, service);
    const first = listening()[2] as number;
    expect([victim, survivor]).not.toContain(first);

    // Killed again at once: a crash loop, so the pause before the next replacement doubles.
    process.kill(first, 'SIGKILL');
    await until(() => listening().length === 4, service);
    const replacement = listening()[3] as number;
    expect([victim, survivor, first]).not.toContain(replacement);
    expect(isAlive(replacement)).toBe(true);
    const pauses = logLines(service)
      .filter((line) => line.msg === 'replacing the worker')
      .map((line) => line.delayMs);
    expect(pauses).toEqual([500, 1000]);

    const load = traffic(port, key, 2);
    try {
      await load.advance(10);
    } finally {
      await load.stop();
    }
    expect(load.failures).toEqual([]);

    // A request in flight when SIGTERM arrives: half its body now, the rest after the signal.
    const body = JSON.stringify({ siteId: 1, perPage: 5 });
    const answer = new Promise<Answer>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/v1/contents',
          agent: false,
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(body),
            'X-SS-API-KEY': key,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => {
            text += chunk.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        service.process.kill('SIGTERM');
        service.waitFor(/shutting down: no new connections/).then(() => req.end(body.slice(10)), reject);
      }, 200);
    });
    const { status, text } = await answer;
    expect(status).toBe(200);
    expect((JSON.parse(text) as { contents: unknown[] }).contents).toHaveLength(5);
    expect(await service.exited).toBe(0);
    // 'exit' can come before the last output is read: wait for the end of stdout (every worker
    // holds it too, so this also waits for them).
    const stdout = service.process.stdout;
    if (stdout && !stdout.readableEnded) await new Promise((resolve) => stdout.once('end', resolve));
    expect(logLines(service).at(-1)).toMatchObject({ msg: 'stopped' });
    for (const pid of [survivor, replacement]) expect(isAlive(pid)).toBe(false);
    const refused = await send(port, 'GET', '/api/v1/ping', {}).then(
      () => 'answered',
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(refused).toBe('ECONNREFUSED');
  });

  // The signal travels through the shared state: the database, or Redis when CI provides one.
  const redisUrl = process.env.TEST_REDIS_URL;
  const through = redisUrl === undefined ? 'the database' : 'Redis';
  test(`a restart requested on one node rolls the workers of the other nodes (signal through ${through})`, async () => {
    const shared: Record<string, string> =
      redisUrl === undefined ? {} : { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: testRedisKeyPrefix() };
    const a = await startSeeded({ WORKERS: '1', ...shared });
    const b = await serve({ DATABASE_URL: (database as EmptyDatabase).url, WORKERS: '1', ...shared });
    await b.service.waitFor(/"msg":"workers ready"/, 60_000);
    const before = [...workersOf(a.service, 'workers ready'), ...workersOf(b.service, 'workers ready')];

    expect(await restart(a.port, a.key)).toEqual({ status: 200, text: '{"value":true}' });
    await Promise.all([a, b].map(({ service }) => service.waitFor(/"msg":"workers restarted"/, 60_000)));
    const after = [
      ...workersOf(a.service, 'workers restarted'),
      ...workersOf(b.service, 'workers restarted'),
    ];
    expect(after).toHaveLength(2);
    for (const pid of after) expect(before).not.toContain(pid);
    // Each node rolled once: the broadcast coming back to node A is not a second request.
    for (const { service } of [a, b]) {
      expect(logLines(service).filter((line) => line.msg === 'restarting workers')).toHaveLength(1);
    }
    for (const { port } of [a, b]) {
      expect(await send(port, 'GET', '/api/v1/ping', {})).toEqual({ status: 200, text: 'pong' });
    }
  });
});

describe(`a single process (WORKERS=0) on ${provider}`, () => {
  test('has no supervisor: a restart answers {value: false} and the process keeps serving', async () => {
    const { service, port, key } = await (async () => {
      database = await createEmptyDatabase();
      const node = await serve({ DATABASE_URL: database.url, SEED_DEMO: 'true', WORKERS: '0' });
      await node.service.waitFor(/"msg":"listening"/);
      return { ...node, key: bootstrapKeyOf(node.service.output()) as string };
    })();
    expect(await restart(port, key)).toEqual({ status: 200, text: '{"value":false}' });
    expect(logLines(service).filter((line) => line.msg?.startsWith('worker'))).toEqual([]);
    expect(await send(port, 'GET', '/api/v1/ping', {})).toEqual({ status: 200, text: 'pong' });
    service.process.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
