import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { MetricsConfig } from './config.ts';
import type { MetricsEndpoint } from './http/metrics.ts';
import { DEFAULT_WORKERS, integerWithin, MAX_WORKERS } from './integerSetting.ts';
import { cmsMessage } from './messages.ts';
import { startFailedReason } from './startFailure.ts';
import { WORKER_V8_FLAGS } from './v8Flags.ts';

/*
 * The supervisor `npm start` runs (WORKERS ≥ 1): the primary process of node:cluster. It owns the
 * listening socket and hands each new connection to one of its workers in turn (cluster's
 * round-robin), so workers can come and go while the port stays open.
 * - It starts WORKERS workers (src/worker.ts); migrations and the seed ran before, once
 *   (src/main.ts), so the workers never race on them.
 * - A worker that dies unexpectedly is replaced, after a pause that doubles with each crash in a
 *   row (up to 30 s), so a crash loop does not spin; a worker that served a while resets it.
 * - A restart request (from a worker's restartSystem, or broadcast by another node) rolls the
 *   workers one at a time: a new worker is listening before the old one is asked to stop; the old
 *   one stops accepting (cluster routes no more connections to it), finishes its requests in
 *   flight and exits. A request that arrives during a roll queues exactly one more roll.
 * - Nodes roll one after another: a roll first takes the cluster-wide roll lease in the shared
 *   state (through a worker, which holds the connection to it) and gives it back at the end, so a
 *   restart never takes every node's capacity down at once. A node waits while another holds it; a
 *   lease left by a node that died expires; without an answer from the store the node rolls anyway.
 * - SIGTERM or SIGINT stops every worker gracefully, then the supervisor exits 0.
 * Log lines name workers by pid (`worker`, `workers`); every line also carries pino's own `pid`,
 * the supervisor's.
 */

/** Channel of the shared state on which restart requests reach the other nodes. */
export const RESTART_CHANNEL = 'restart';

/** What a worker tells its supervisor: roll the workers (id: the request's, to count it once). */
export interface RestartMessage {
  cms: 'restart';
  id: string;
}

/** What the supervisor tells a worker: stop accepting, finish in-flight requests, exit 0. */
export interface StopMessage {
  cms: 'stop';
}

/** Restart ids are UUIDs; anything else on the channel is not a restart request. */
export const RESTART_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isRestartMessage(message: unknown): message is RestartMessage {
  const id = cmsMessage(message, 'restart')?.id;
  return typeof id === 'string' && RESTART_ID.test(id);
}

export const isStopMessage = (message: unknown): message is StopMessage =>
  cmsMessage(message, 'stop') !== undefined;

/** The shared-state key of the cluster-wide roll lease; its value is the holding roll's token. */
export const ROLL_LEASE_KEY = 'restart:roll';

/**
 * What the supervisor asks a worker to do with the roll lease: take it (set if absent), keep it
 * (extend while still ours) or give it back (delete while still ours).
 */
export interface RollLeaseRequest {
  cms: 'rollLease';
  op: 'take' | 'keep' | 'give';
  token: string;
  ttlMs: number;
  seq: number;
}

/** held: the lease is the roll's; busy: another node's; unavailable: the store did not answer. */
export type RollLeaseOutcome = 'held' | 'busy' | 'unavailable';

export interface RollLeaseAnswer {
  cms: 'rollLeaseAnswer';
  seq: number;
  outcome: RollLeaseOutcome;
}

export function isRollLeaseRequest(message: unknown): message is RollLeaseRequest {
  const fields = cmsMessage(message, 'rollLease');
  return (
    fields !== undefined &&
    (fields.op === 'take' || fields.op === 'keep' || fields.op === 'give') &&
    typeof fields.token === 'string' &&
    typeof fields.ttlMs === 'number' &&
    typeof fields.seq === 'number'
  );
}

function rollLeaseAnswerOf(message: unknown): RollLeaseAnswer | undefined {
  const fields = cmsMessage(message, 'rollLeaseAnswer');
  if (fields === undefined || typeof fields.seq !== 'number') return undefined;
  const { outcome } = fields;
  return outcome === 'held' || outcome === 'busy' || outcome === 'unavailable'
    ? { cms: 'rollLeaseAnswer', seq: fields.seq, outcome }
    : undefined;
}

/**
 * A worker that has loaded its code asks whether the database is ready (migrated, seeded, token
 * secret settled); the supervisor answers `prepared` once it is. Workers are forked at once, so
 * that loading their code overlaps the primary's preparation instead of following it.
 */
export interface PreparedQuery {
  cms: 'prepared?';
}

export interface PreparedMessage {
  cms: 'prepared';
}

export const isPreparedQuery = (message: unknown): message is PreparedQuery =>
  cmsMessage(message, 'prepared?') !== undefined;
export const isPreparedMessage = (message: unknown): message is PreparedMessage =>
  cmsMessage(message, 'prepared') !== undefined;

export interface SupervisorOptions {
  workers: number;
  logger: Logger;
  /**
   * Settles when the database is ready for workers to use (src/main.ts). Workers are started
   * before; a rejection is the caller's to report (it ends the process, and its workers with it).
   */
  prepared?: Promise<void>;
  /** A worker asked to stop is killed after this long (its own grace is shorter). */
  stopTimeoutMs?: number;
  /** The metrics port, where the supervisor answers the sum of its workers' figures. */
  metrics?: MetricsConfig | undefined;
}

/**
 * glibc's malloc settings of every worker, over the supervisor's own; read when a process starts,
 * hence set for the fork; a value the operator sets is kept; other C libraries ignore them.
 * - MALLOC_ARENA_MAX: glibc gives each thread that allocates an arena of its own (up to 8 per core)
 *   and keeps their freed memory; two arenas cut a worker's resident memory (bench/RUNTIME.md,
 *   "Memory: Prisma's small query compiler").
 * - MALLOC_MMAP_THRESHOLD_: a page's answer is one buffer of its size (src/http/pages.ts). glibc
 *   maps a block that large on its own, but once one is freed it raises the threshold to that size
 *   and serves the next ones from its heap, which they fragment: freed, the memory stays resident.
 *   A fixed threshold keeps every block of 64 KiB or more mapped alone and given back when freed
 *   (bench/MEMORY.md, 2026-11-28).
 */
export const WORKER_MALLOC_ENVIRONMENT = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '65536' } as const;

export function workerEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(
    Object.entries(WORKER_MALLOC_ENVIRONMENT).map(([name, value]) => [name, env[name] ?? value]),
  );
}

/**
 * Set in the environment of a worker that replaces another (after a crash, or in a restart's roll):
 * it starts even while Redis does not answer, under the shared state's fail-open policy, since the
 * node is serving already (src/worker.ts). A node's first workers refuse to start without it.
 */
export const REPLACEMENT_WORKER_ENV = 'CMS_REPLACEMENT_WORKER';

const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;
/** A worker that served this long before dying was not part of a crash loop. */
const STABLE_AFTER_MS = 10_000;
/** Restart ids already handled are remembered this long (a broadcast comes back once per worker). */
const SEEN_FOR_MS = 10 * 60_000;
/** A node waiting for another's roll asks for the lease again after about this long. */
const LEASE_POLL_MS = 1_000;
/** A worker that does not answer a lease request within this long counts as a store that does not. */
const LEASE_ANSWER_MS = 10_000;
/** A store that does not answer for this long (a brief slowness is not an outage) is rolled without. */
const LEASE_UNAVAILABLE_MS = 15_000;

class WorkerDidNotStart extends Error {
  override name = 'WorkerDidNotStart';
  /** The worker's own sentence for the operator, when it said why (a port in use). */
  constructor(
    message: string,
    readonly sentence?: string,
  ) {
    super(message);
  }
}

function setUpPrimary(): void {
  cluster.setupPrimary({ execArgv: [...WORKER_V8_FLAGS, ...process.execArgv] });
}

// The state below is the primary process's own, as node:cluster (which it drives) is process-wide.
/** Workers forkEarly started, until supervise takes them. */
const forkedEarly: Worker[] = [];

/**
 * The database preparation the workers wait for: supervise() hands it over; until then (workers
 * forked early ask before it exists) the answer waits.
 */
let settlePrepared: (prepared: Promise<void>) => void = () => undefined;
const preparedForWorkers = new Promise<void>((resolve, reject) => {
  settlePrepared = (prepared) => {
    prepared.then(resolve, reject);
  };
});
// The caller of supervise reports a failed preparation; here it only must not be an unhandled rejection.
preparedForWorkers.catch(() => undefined);

let answering = false;

/** Answers each worker's `prepared?` once the preparation has succeeded (never if it failed). */
function answerPreparedQueries(): void {
  if (answering) return;
  answering = true;
  cluster.on('message', (worker, message: unknown) => {
    if (!isPreparedQuery(message)) return;
    const answer: PreparedMessage = { cms: 'prepared' };
    preparedForWorkers.then(
      () => {
        if (worker.isConnected()) worker.send(answer);
      },
      () => undefined,
    );
  });
}

/**
 * The worker count WORKERS asks for, read the way src/config.ts reads it, or undefined when it is
 * not a valid count of at least one (no worker is forked early; the configuration reports it).
 */
export function earlyWorkerCount(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.WORKERS;
  if (raw === undefined) return DEFAULT_WORKERS;
  // 0 (no supervisor) forks none; config.ts's range starts at 0.
  return integerWithin(raw, 1, MAX_WORKERS);
}

/**
 * Forks the workers before the supervisor has read its configuration: a worker's start (node, then
 * its module loading, the larger part) then overlaps the supervisor's own module loading (the
 * configuration's validator, the logger) as well as its database preparation. A worker touches
 * nothing before the supervisor answers `prepared`; supervise() adopts these workers, and a
 * supervisor whose configuration is invalid kills them (killEarlyWorkers) before it exits.
 */
export function forkEarly(count: number): void {
  setUpPrimary();
  answerPreparedQueries();
  for (let index = 0; index < count; index++) forkedEarly.push(cluster.fork(workerEnvironment()));
}

/** Stops the workers forked early, when there is nothing for them to serve. */
export function killEarlyWorkers(): void {
  for (const worker of forkedEarly.splice(0)) worker.process.kill('SIGKILL');
}

export function supervise(options: SupervisorOptions): void {
  const { logger } = options;
  const stopTimeoutMs = options.stopTimeoutMs ?? 15_000;
  /** Listening, in rotation, not asked to stop. */
  const serving = new Set<Worker>();
  /** When each serving worker started listening. */
  const since = new Map<Worker, number>();
  /** Asked to stop: their exit is expected. */
  const retiring = new Set<Worker>();
  /** Every worker not yet exited (cluster.workers forgets one once it is disconnected). */
  const alive = new Set<Worker>();
  /** Workers that have listened, and so can take the stop message. */
  const listened = new WeakSet<Worker>();
  const seen = new Map<string, number>();
  let crashes = 0;
  let replacing: NodeJS.Timeout | undefined;
  let rolling = false;
  let rollAgain = false;
  let stopping = false;
  let metricsEndpoint: MetricsEndpoint | undefined;

  const pidOf = (worker: Worker) => worker.process.pid;
  const pids = () => [...serving].map(pidOf);

  setUpPrimary();

  /**
   * Forks a worker (or takes one forkEarly forked); resolves once it listens, rejects if it exits
   * first.
   */
  function startWorker(forked?: Worker, replacement = false): Promise<Worker> {
    const worker =
      forked ??
      cluster.fork({ ...workerEnvironment(), ...(replacement && { [REPLACEMENT_WORKER_ENV]: '1' }) });
    alive.add(worker);
    if (worker.isDead()) {
      alive.delete(worker);
      return Promise.reject(new WorkerDidNotStart(`worker ${pidOf(worker)} exited before listening`));
    }
    return new Promise((resolve, reject) => {
      let sentence: string | undefined;
      const onMessage = (message: unknown) => {
        sentence = startFailedReason(message) ?? sentence;
      };
      const onListening = () => {
        worker.off('exit', onExit);
        worker.off('message', onMessage);
        serving.add(worker);
        listened.add(worker);
        since.set(worker, Date.now());
        logger.info({ worker: pidOf(worker) }, 'worker listening');
        resolve(worker);
      };
      const onExit = (code: number | null, signal: string | null) => {
        worker.off('listening', onListening);
        worker.off('message', onMessage);
        const why = `worker ${pidOf(worker)} exited before listening (${signal ?? code})`;
        reject(new WorkerDidNotStart(sentence === undefined ? why : `${why}: ${sentence}`, sentence));
      };
      worker.on('message', onMessage);
      worker.once('listening', onListening);
      worker.once('exit', onExit);
    });
  }

  /** Asks a worker to stop gracefully; resolves once it has exited. */
  function retire(worker: Worker): Promise<void> {
    serving.delete(worker);
    since.delete(worker);
    retiring.add(worker);
    if (worker.isDead()) return Promise.resolve();
    return new Promise((resolve) => {
      const killer = setTimeout(() => {
        logger.warn({ worker: pidOf(worker) }, 'worker did not stop in time; killing it');
        worker.process.kill('SIGKILL');
      }, stopTimeoutMs);
      worker.once('exit', () => {
        clearTimeout(killer);
        resolve();
      });
      const stop: StopMessage = { cms: 'stop' };
      if (listened.has(worker) && worker.isConnected()) {
        worker.send(stop);
        // Takes the worker out of the round-robin here and now: no connection is handed to it
        // any more. (One handed over while it exits would be lost, its client left hanging.)
        // Those handed over before reach it ahead of the stop message, and it serves them.
        worker.disconnect();
      } else {
        // One still starting may not listen for messages yet; SIGTERM stops it either way.
        worker.process.kill('SIGTERM');
      }
    });
  }

  function replaceLater(): void {
    if (stopping || replacing !== undefined) return;
    const delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, crashes - 1));
    logger.info({ delayMs: delay }, 'replacing the worker');
    replacing = setTimeout(() => {
      replacing = undefined;
      if (stopping) return;
      startWorker(undefined, true).then(
        () => {
          // Another one may have died while this one started.
          if (serving.size < options.workers) replaceLater();
        },
        (error: unknown) => {
          crashes += 1;
          logger.error({ reason: (error as Error).message }, 'the replacement worker did not start');
          replaceLater();
        },
      );
    }, delay);
  }

  cluster.on('exit', (worker, code, signal) => {
    alive.delete(worker);
    if (retiring.delete(worker)) {
      logger.info({ worker: pidOf(worker), code, signal }, 'worker stopped');
      return;
    }
    if (!serving.delete(worker)) return; // It never listened: its starter handles that.
    const servedFor = Date.now() - (since.get(worker) ?? 0);
    since.delete(worker);
    crashes = servedFor >= STABLE_AFTER_MS ? 1 : crashes + 1;
    logger.error({ worker: pidOf(worker), code, signal }, 'worker exited unexpectedly');
    replaceLater();
  });

  // The roll lease outlives one step of a roll (a worker started, the old one stopped), and each
  // step extends it: a node that dies mid-roll holds the others back no longer than this.
  const leaseTtlMs = stopTimeoutMs + 60_000;
  let leaseSeq = 0;
  const leaseAnswers = new Map<number, (outcome: RollLeaseOutcome) => void>();

  /** Asks a serving worker to act on the roll lease; 'unavailable' when none answers in time. */
  function askLease(op: RollLeaseRequest['op'], token: string): Promise<RollLeaseOutcome> {
    const worker = [...serving].find((candidate) => candidate.isConnected());
    if (worker === undefined) return Promise.resolve('unavailable');
    leaseSeq += 1;
    const seq = leaseSeq;
    return new Promise((resolve) => {
      const settle = (outcome: RollLeaseOutcome) => {
        clearTimeout(timer);
        leaseAnswers.delete(seq);
        resolve(outcome);
      };
      const timer = setTimeout(() => settle('unavailable'), LEASE_ANSWER_MS);
      leaseAnswers.set(seq, settle);
      const request: RollLeaseRequest = { cms: 'rollLease', op, token, ttlMs: leaseTtlMs, seq };
      worker.send(request, undefined, {}, (error: Error | null) => {
        if (error !== null) settle('unavailable');
      });
    });
  }

  /**
   * Waits for the roll lease while another node holds it; true once this roll holds it, false when
   * the store has not answered for LEASE_UNAVAILABLE_MS (a restart must not wait on an outage).
   */
  async function takeRollLease(token: string): Promise<boolean> {
    let waiting = false;
    let unavailableSince: number | undefined;
    while (!stopping) {
      const outcome = await askLease('take', token);
      if (outcome === 'held') return true;
      if (outcome === 'unavailable') {
        unavailableSince ??= Date.now();
        if (Date.now() - unavailableSince >= LEASE_UNAVAILABLE_MS) {
          logger.warn('the shared state does not answer: rolling without waiting for the other nodes');
          return false;
        }
      } else {
        unavailableSince = undefined;
        if (!waiting) logger.info('another node is rolling its workers: waiting for it to finish');
        waiting = true;
      }
      await sleep(LEASE_POLL_MS * (0.5 + Math.random()));
    }
    return false;
  }

  async function roll(): Promise<void> {
    if (rolling) {
      rollAgain = true;
      return;
    }
    rolling = true;
    let token: string | undefined;
    try {
      do {
        const mine = randomUUID();
        token = (await takeRollLease(mine)) ? mine : undefined;
        if (stopping) return;
        // Requests that came while this node waited for the lease are served by this roll.
        rollAgain = false;
        const old = [...serving];
        logger.info({ workers: old.map(pidOf) }, 'restarting workers');
        for (const previous of old) {
          if (stopping) return;
          // One that died meanwhile is being replaced already.
          if (!serving.has(previous)) continue;
          if (token !== undefined) await askLease('keep', token);
          await startWorker(undefined, true);
          await retire(previous);
        }
        logger.info({ workers: pids() }, 'workers restarted');
        if (token !== undefined) await askLease('give', token);
        token = undefined;
      } while (rollAgain && !stopping);
    } catch (error) {
      logger.error(
        { reason: (error as Error).message },
        'restart abandoned: a new worker did not start; the others keep serving',
      );
    } finally {
      // A roll that ended early gives the lease back too (best effort: it expires otherwise).
      if (token !== undefined) void askLease('give', token);
      rolling = false;
    }
  }

  settlePrepared(options.prepared ?? Promise.resolve());
  answerPreparedQueries();

  cluster.on('message', (_worker, message: unknown) => {
    const answer = rollLeaseAnswerOf(message);
    if (answer !== undefined) leaseAnswers.get(answer.seq)?.(answer.outcome);
  });

  cluster.on('message', (worker, message: unknown) => {
    if (!isRestartMessage(message) || stopping) return;
    const now = Date.now();
    for (const [id, at] of seen) if (now - at > SEEN_FOR_MS) seen.delete(id);
    if (seen.has(message.id)) return;
    seen.set(message.id, now);
    logger.info({ worker: pidOf(worker) }, 'restart requested');
    void roll();
  });

  async function stop(signal: NodeJS.Signals): Promise<void> {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      for (const worker of alive) worker.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    clearTimeout(replacing);
    logger.info({ signal, workers: pids() }, 'shutting down: workers finish their in-flight requests');
    await Promise.all([...alive].map(retire));
    await metricsEndpoint?.close();
    logger.info('stopped');
    process.exit(0);
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop(signal));

  // Workers forked before the configuration was read are this supervisor's first ones.
  const adopted = forkedEarly.splice(0, options.workers);
  for (const extra of forkedEarly.splice(0)) extra.process.kill('SIGKILL');
  const initial: Promise<unknown>[] = Array.from({ length: options.workers }, (_, index) =>
    startWorker(adopted[index]),
  );
  const settings = options.metrics;
  if (settings) {
    // Loaded only when metrics are on (prom-client costs a process start-up time and memory).
    const opening = import('./http/metrics.ts').then(({ serveMetrics, clusterCollector }) =>
      serveMetrics({ ...settings, logger, collect: clusterCollector(() => [...serving]) }),
    );
    initial.push(
      opening.then(
        (endpoint) => {
          metricsEndpoint = endpoint;
        },
        (error: Error) => {
          throw new Error(`metrics port ${settings.port}: ${error.message}`);
        },
      ),
    );
  }
  Promise.allSettled(initial).then((results) => {
    if (stopping) return; // A signal came first: stop() is under way.
    const failed = results.find((result) => result.status === 'rejected');
    if (failed === undefined) {
      logger.info({ workers: pids() }, 'workers ready');
      return;
    }
    // A worker that cannot start now (a port in use, Redis down) will not start on a retry either.
    logger.error({ reason: (failed.reason as Error).message }, 'a worker could not start; stopping');
    const sentence = failed.reason instanceof WorkerDidNotStart ? failed.reason.sentence : undefined;
    if (sentence !== undefined) process.stderr.write(`Could not start: ${sentence}\n`);
    stopping = true;
    Promise.all([...serving].map(retire)).then(() => process.exit(1));
  });
}
