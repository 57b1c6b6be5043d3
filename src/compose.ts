import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type Config, ensureTokenSecret } from './config.ts';
import { createDb, type DbHandle, SERVICE_SQLITE_CACHE_KIB } from './db/client.ts';
import { openSandbox } from './db/sandbox/index.ts';
import { BackgroundTasks } from './http/background.ts';
import type { ServiceMetrics } from './http/metrics.ts';
import type { Services } from './http/services.ts';
import type { RestartWorkers } from './operations/types.ts';
import { createSharedState } from './state/index.ts';
import type { SharedState } from './state/port.ts';

/*
 * The composition root: the one place a serving process's services are made. The worker composes
 * them from its configuration alone; the tests' support (test/support/app.ts) composes the same
 * services from a test database and whatever parts a test brings. What is made here, the services
 * close (Services.close, in the reverse order of making); what a caller hands in stays its own.
 */

/** No request's statement may hold a PostgreSQL connection longer than this (a 503 after it). */
const STATEMENT_TIMEOUT_MS = 15_000;

/** Parts made elsewhere: used as they are, and left to their maker to close. */
export interface GivenParts {
  /** The database client; made from DATABASE_URL when absent. */
  db?: DbHandle;
  /** The Redis connection of the shared state; made from REDIS_URL when absent and set. */
  redis?: Redis;
  /** The shared state; made on Redis when there is a connection, else on the database. */
  state?: SharedState;
  /**
   * Metrics the caller reads itself (tests): no endpoint is served for them. Absent, metrics are made
   * when METRICS_PORT is set, and served on it (or answered to the supervisor).
   */
  metrics?: ServiceMetrics;
  /** How restartSystem reaches the supervisor, given the state (src/worker.ts); absent, it answers false. */
  restart?: (state: SharedState) => Promise<RestartWorkers>;
  /** A Redis made here that does not answer lets the start go on under the fail-open policy. */
  redisFailOpen?: boolean;
  /** Under a supervisor, metrics made here answer its collection instead of serving a port. */
  supervised?: boolean;
}

/** A process that runs without a supervisor has nothing to roll. */
const unsupervised: RestartWorkers = async () => false;

export async function composeServices(
  config: Config,
  logger: Logger,
  given: GivenParts = {},
): Promise<Services> {
  const made: (() => Promise<unknown>)[] = [];
  const closeMade = async () => {
    for (const close of made.splice(0).reverse()) await close();
  };
  try {
    // prom-client is loaded only when metrics are on: it costs every process start-up time and
    // memory (bench/RUNTIME.md, "Start-up").
    const metricsModule =
      given.metrics === undefined && config.metrics ? await import('./http/metrics.ts') : undefined;
    const metrics = given.metrics ?? (metricsModule && new metricsModule.ServiceMetrics());
    // ioredis is loaded only when Redis is configured (bench/RUNTIME.md, "Start-up").
    let redis = given.redis;
    let redisDown = false;
    if (redis === undefined && given.state === undefined && config.redisUrl !== undefined) {
      const connection = await (await import('./db/redis.ts')).connectRedis(config.redisUrl, {
        failOpen: given.redisFailOpen === true,
        onUnavailable: () => {
          redisDown = true;
          logger.warn('Redis does not answer: starting under the fail-open policy of the shared state');
        },
      });
      // QUIT waits for an answer Redis cannot give during an outage: then the socket is just closed.
      made.push(() => connection.quit().then(undefined, () => connection.disconnect()));
      redis = connection;
    }
    let handle = given.db;
    if (handle === undefined) {
      // SQLite's WAL mode was set by the preparation every start runs first (src/start.ts): it is
      // kept in the database file.
      const opened = await createDb(config.databaseUrl, {
        statementTimeoutMs: STATEMENT_TIMEOUT_MS,
        sqliteQueryTimeoutMs: config.sqliteQueryTimeoutMs,
        sqliteCacheKib: SERVICE_SQLITE_CACHE_KIB,
        refuseClientInsideTransactions: config.nodeEnv !== 'production',
        ...(metrics && { onQuery: metrics.observeQuery }),
      });
      made.push(() => opened.db.$disconnect());
      handle = opened;
    }
    const { db, provider, reads, costly, writes } = handle;
    const resolved = await ensureTokenSecret(config, db);
    const sandbox = openSandbox(config.databaseUrl);
    made.push(() => sandbox.close());
    let state = given.state;
    if (state === undefined) {
      const own = createSharedState({
        db,
        redis,
        redisKeyPrefix: config.redisKeyPrefix,
        logger,
        startDown: redisDown,
      });
      made.push(() => own.close());
      state = own;
    }
    const restart = given.restart === undefined ? unsupervised : await given.restart(state);
    // Under the supervisor, its metrics port sums the workers' figures; alone, a process serves its own.
    if (metricsModule && metrics && config.metrics) {
      const endpoint = given.supervised
        ? metricsModule.answerSupervisor(metrics)
        : await metricsModule.serveMetrics({
            ...config.metrics,
            logger,
            collect: () => metrics.registry.metrics(),
          });
      made.push(() => endpoint.close());
    }
    const background = new BackgroundTasks();
    let closing: Promise<void> | undefined;
    return {
      db,
      provider,
      reads,
      costly,
      writes,
      config: resolved,
      logger,
      state,
      restart,
      sandbox,
      background,
      metrics,
      close() {
        closing ??= background.settled().then(closeMade);
        return closing;
      },
    };
  } catch (error) {
    await closeMade();
    throw error;
  }
}
