import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { afterEach, describe, expect, jest, test } from '@jest/globals';
import autocannon from 'autocannon';
import { WORKER_V8_FLAGS } from '../../src/v8Flags.ts';
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
  time?: number;
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
 * One request with fetch as it comes: on a keep-alive connection of its default agent, the way
 * real clients reuse connections (a worker that is replaced must drain them without a reset).
 */
async function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      ...(body !== undefined && { body }),
      // A request that never gets an answer is a failure to report, not a test that hangs.
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    // fetch's TypeError carries the socket's code in its cause (ECONNRESET, UND_ERR_SOCKET…).
    const cause = (error as { cause?: { code?: string } }).cause;
    throw Object.assign(new Error(`${method} ${path}: ${cause?.code ?? (error as Error).message}`), {
      code: cause?.code,
    });
  }
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
      if (turn % 3 === 0) {
        const answer = await send(port, 'GET', '/api/v1/ping', {});
        if (answer.status === 200 && answer.text === 'pong') ok += 1;
        else failures.push(`ping: ${answer.status} ${answer.text}`);
      } else if (turn % 3 === 1) {
        // Refused synchronously by the app: must not crash a worker that is stopping.
        const answer = await send(port, 'GET', '/api/v1/ping?x=%00', {});
        if (answer.status === 400 && answer.text.includes('NUL character')) ok += 1;
        else failures.push(`NUL: ${answer.status} ${answer.text}`);
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

/** A worker's command line carries the V8 flags, and its environment the malloc settings. */
function expectMemorySettings(pids: number[]): void {
  expect(WORKER_V8_FLAGS).toContain('--heap-growing-percent=30');
  for (const pid of pids) {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(argv).toEqual(expect.arrayContaining(WORKER_V8_FLAGS));
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toEqual(
      expect.arrayContaining(['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=65536']),
    );
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
  test('three restarts in a row under keep-alive traffic (fetch loops and autocannon) replace every worker, one at a time, with zero failed requests', async () => {
    const { service, port, key } = await startSeeded();
    const first = workersOf(service, 'workers ready');
    expect(first).toHaveLength(2);
    // Every worker, the first ones and their replacements, runs with the memory settings.
    expectMemorySettings(first);

    const load = traffic(port, key, 4);
    // Ten keep-alive connections that send the next request as soon as an answer is in, at a
    // moderate rate (the machine is shared).
    const cannon = autocannon({
      url: `http://127.0.0.1:${port}/api/v1/ping`,
      connections: 10,
      duration: 600,
      overallRate: 200,
      timeout: 20,
    });
    const rounds: { before: number[]; after: number[] }[] = [];
    try {
      await load.advance(20);
      for (let round = 1; round <= 3; round += 1) {
        const before = round === 1 ? first : workersOf(service, 'workers restarted');
        const answer = await restart(port, key);
        expect(answer).toEqual({ status: 200, text: '{"value":true}' });
        const servedWhenAnswered = load.ok();
        await until(
          () => logLines(service).filter((line) => line.msg === 'workers restarted').length === round,
          service,
        );
        const servedWhenRestarted = load.ok();
        await load.advance(20);
        // Traffic went on while the workers were being replaced.
        expect(servedWhenRestarted).toBeGreaterThan(servedWhenAnswered);
        const after = workersOf(service, 'workers restarted');
        expectMemorySettings(after);
        rounds.push({ before, after });
      }
    } finally {
      await load.stop();
      cannon.stop();
    }
    const cannonResult = await cannon;
    expect(load.failures).toEqual([]);
    expect(cannonResult['2xx']).toBeGreaterThan(100);
    expect({
      errors: cannonResult.errors,
      timeouts: cannonResult.timeouts,
      non2xx: cannonResult.non2xx,
    }).toEqual({
      errors: 0,
      timeouts: 0,
      non2xx: 0,
    });
    // No worker crashed or was killed.
    expect(logLines(service).filter((line) => /unexpectedly|killing/.test(line.msg ?? ''))).toEqual([]);

    const lines = logLines(service);
    const index = (msg: string, worker: number) =>
      lines.findIndex((line) => line.msg === msg && line.worker === worker);
    for (const { before, after } of rounds) {
      expect(after).toHaveLength(2);
      for (const pid of after) expect(before).not.toContain(pid);
      // One at a time: each old worker stopped (exit 0) only after a new one listened.
      for (const [position, old] of before.entries()) {
        const successor = after[position] as number;
        expect(index('worker listening', successor)).toBeGreaterThan(-1);
        expect(index('worker stopped', old)).toBeGreaterThan(index('worker listening', successor));
        expect(lines[index('worker stopped', old)]).toMatchObject({ code: 0, signal: null });
        expect(isAlive(old)).toBe(false);
      }
    }
    // Three rolls under traffic, each taking the roll lease: more than the usual ceiling on a loaded machine.
  }, 360_000);

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
          // A keep-alive connection, as real clients hold: the request on it still finishes.
          agent: new Agent({ keepAlive: true }),
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
  test(`a restart requested on one node rolls the workers of the other nodes, one node after another (signal through ${through})`, async () => {
    const shared: Record<string, string> =
      redisUrl === undefined ? {} : { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: testRedisKeyPrefix() };
    const a = await startSeeded({ WORKERS: '1', ...shared });
    const b = await serve({ DATABASE_URL: (database as EmptyDatabase).url, WORKERS: '1', ...shared });
    await b.service.waitFor(/"msg":"workers ready"/, 60_000);
    const before = [...workersOf(a.service, 'workers ready'), ...workersOf(b.service, 'workers ready')];

    expect(await restart(a.port, a.key)).toEqual({ status: 200, text: '{"value":true}' });
    await Promise.all([a, b].map(({ service }) => service.waitFor(/"msg":"workers restarted"/, 150_000)));
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
    // One node after the other (the cluster-wide roll lease): the rolls' spans do not overlap, and
    // the node that came second said it waited.
    const span = (service: Service) => {
      const time = (msg: string) => logLines(service).find((line) => line.msg === msg)?.time ?? Number.NaN;
      return { start: time('restarting workers'), end: time('workers restarted') };
    };
    const [first, second] = [span(a.service), span(b.service)].sort((x, y) => x.start - y.start);
    const rollLines = [a, b].map(({ service }) =>
      logLines(service)
        .filter((line) => /restart|rolling|waiting|shared state/.test(line.msg ?? ''))
        .map((line) => `${line.time} ${line.msg}`),
    );
    expect({ overlap: (second?.start ?? 0) < (first?.end ?? Number.NaN), rollLines }).toEqual({
      overlap: false,
      rollLines,
    });
    const waited = [a, b].filter(({ service }) =>
      logLines(service).some(
        (line) => line.msg === 'another node is rolling its workers: waiting for it to finish',
      ),
    );
    expect(waited).toHaveLength(1);
    for (const { port } of [a, b]) {
      expect(await send(port, 'GET', '/api/v1/ping', {})).toEqual({ status: 200, text: 'pong' });
    }
    // Two nodes started, then two rolls one after the other: more than the usual ceiling on a loaded machine.
  }, 420_000);
});

/** A redis-server of the test's own on a free port, without persistence; only it is ever stopped. */
async function ownRedis(port: number) {
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  for (let tries = 0; !output.includes('Ready to accept connections'); tries++) {
    if (tries > 400 || child.exitCode !== null) throw new Error(`redis-server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    async stop() {
      // Killed once already (the outage), it has no exit left to wait for.
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    },
  };
}

describe(`a Redis outage on ${provider}`, () => {
  test(
    'the node keeps serving, /readyz is 200 degraded, a replaced worker starts, and all is back once Redis is',
    async () => {
      const redisPort = await freePort();
      let redis = await ownRedis(redisPort);
      try {
        const { service, port, key } = await startSeeded({
          REDIS_URL: `redis://127.0.0.1:${redisPort}`,
          REDIS_KEY_PREFIX: `${testRedisKeyPrefix()}outage:`,
        });
        expect(await send(port, 'GET', '/readyz', {})).toEqual({ status: 200, text: '{"status":"ok"}' });
        await redis.stop();

        const before = traffic(port, key, 2);
        try {
          await before.advance(10);
        } finally {
          await before.stop();
        }
        expect(before.failures).toEqual([]);
        const ready = await send(port, 'GET', '/readyz', {});
        expect(ready.status).toBe(200);
        expect(JSON.parse(ready.text)).toMatchObject({
          status: 'degraded',
          degraded: [expect.stringMatching(/^Redis is not reachable/)],
        });
        // A worker that dies during the outage is replaced: its replacement starts without Redis.
        // (No traffic meanwhile: a SIGKILL cuts what the worker had in flight, by its nature.)
        const [victim] = workersOf(service, 'workers ready') as [number, number];
        process.kill(victim, 'SIGKILL');
        await service.waitFor(/"msg":"worker exited unexpectedly"/);
        const listening = () => logLines(service).filter((line) => line.msg === 'worker listening');
        await until(() => listening().length === 3, service);
        const load = traffic(port, key, 2);
        try {
          await load.advance(20);
          // And a restart rolls every worker during the outage.
          expect(await restart(port, key)).toEqual({ status: 200, text: '{"value":true}' });
          await service.waitFor(/"msg":"workers restarted"/, 90_000);
          await load.advance(20);
        } finally {
          await load.stop();
        }
        expect(load.failures).toEqual([]);
        expect(
          logLines(service).filter((line) => line.msg === 'the replacement worker did not start'),
        ).toEqual([]);
        // Each rolled worker stopped cleanly: nothing of its shutdown waited on the missing Redis.
        const stopped = logLines(service).filter((line) => line.msg === 'worker stopped');
        expect(stopped.length).toBeGreaterThanOrEqual(2);
        expect(stopped.map((line) => line.code)).toEqual(stopped.map(() => 0));

        // Redis back: readiness is ok again once the workers' probes have seen it.
        redis = await ownRedis(redisPort);
        let answer = '';
        for (let tries = 0; answer !== '{"status":"ok"}' && tries < 400; tries++) {
          answer = (await send(port, 'GET', '/readyz', {})).text;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(answer).toBe('{"status":"ok"}');
      } finally {
        await redis.stop();
      }
      // A node, a crash, a replacement and a roll, each worker starting without Redis: longer than the
      // file's other tests on a loaded machine.
    },
    2 * TEST_TIMEOUT_MS,
  );
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
