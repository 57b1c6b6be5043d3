import type { Express } from 'express';
import type { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { type Config, loadConfig } from '../../src/config.ts';
import type { Db, DbHandle, DbProvider } from '../../src/db/client.ts';
import { issueApiKey } from '../../src/domain/apiKeys/issueApiKey.ts';
import { SCOPES, type Scope } from '../../src/domain/principal.ts';
import { backgroundTasksOf, createApp } from '../../src/http/app.ts';
import type { ServiceMetrics } from '../../src/http/metrics.ts';
import type { Registry } from '../../src/operations/registry.ts';
import type { RestartWorkers } from '../../src/operations/types.ts';
import { createSharedState, type SharedState } from '../../src/state/index.ts';
import { createTestDatabase } from './database.ts';
import { leaks, observeApp } from './leaks.ts';
import { testRedisKeyPrefix } from './run.ts';

export interface ApiKeyOptions {
  expiresAt?: Date;
  revoked?: boolean;
  title?: string;
}

export interface TestApp {
  app: Express;
  /** Requests go through the whole pipeline: logging, validation, security, handler, error mapper. */
  request: TestAgent;
  db: Db;
  provider: DbProvider;
  /** The app's shared state: in the given Redis, else in the test database. */
  state: SharedState;
  /** The app's configuration, including the token secret (to sign access tokens in tests). */
  config: Config & { cmsSecret: string };
  /** Stores a new key with these scopes and returns the key itself. */
  createApiKey(scopes: Scope[] | 'all', options?: ApiKeyOptions): Promise<string>;
  /** Waits for background writes, then disconnects and deletes the database. */
  close(): Promise<void>;
}

export interface TestAppOptions {
  /**
   * Where the app logs, besides the file's secret scan (test/support/leaks.ts), which sees every
   * line at every level whatever this logger's level.
   */
  logger?: Logger;
  handlers?: Registry;
  /** Settings that differ from the defaults, e.g. a small rate limit. */
  config?: Partial<Config>;
  /** Keeps the shared state in this Redis (under the config's key prefix) instead of the database. */
  redis?: Redis;
  /**
   * What restartSystem reaches, in place of a supervisor (tests have none): e.g. a recorder. Absent,
   * the app is an unsupervised process, whose restart answers false.
   */
  restart?: RestartWorkers;
  /**
   * Metrics on, wired as src/worker.ts wires them: the app counts and times requests, and its
   * database client times queries.
   */
  metrics?: ServiceMetrics;
}

type Destination = { write(line: string): unknown };

/**
 * The app's logger: everything, at trace level, into the file's secret scan; and into the test's own
 * logger (at that logger's level) when the test gave one.
 */
function scannedLogger(given: Logger | undefined): Logger {
  const scanned = leaks.logDestination();
  if (given === undefined) return pino({ level: 'trace' }, scanned);
  const own = (given as unknown as Record<symbol, Destination | undefined>)[pino.symbols.streamSym];
  const threshold = given.levelVal;
  return pino(
    { level: 'trace' },
    {
      write(line: string) {
        scanned.write(line);
        // pino writes each line with its numeric level first: `{"level":30,...`.
        const level = Number(/^\{"level":(\d+)/.exec(line)?.[1] ?? Number.POSITIVE_INFINITY);
        if (own !== undefined && level >= threshold) own.write(line);
      },
    },
  );
}

export const TEST_SECRET = 'test-secret-that-is-at-least-32-characters-long';

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const metrics = options.metrics;
  const database = await createTestDatabase(metrics === undefined ? {} : { onQuery: metrics.observeQuery });
  const { db, provider } = database.handle;
  const config = {
    ...loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent' }),
    databaseUrl: database.url,
    cmsSecret: TEST_SECRET,
    // Test runs share one Redis (CI runs SQLite then PostgreSQL within the same minute).
    redisKeyPrefix: testRedisKeyPrefix(),
    ...options.config,
  };
  leaks.secret(config.cmsSecret, 'CMS_SECRET');
  const logger = scannedLogger(options.logger);
  const state = createSharedState({
    db,
    redis: options.redis,
    redisKeyPrefix: config.redisKeyPrefix,
    logger,
  });
  const app = createApp({
    db,
    provider,
    config,
    logger,
    state,
    ...(options.handlers === undefined ? {} : { handlers: options.handlers }),
    ...(options.restart === undefined ? {} : { restart: options.restart }),
    ...(metrics === undefined ? {} : { metrics }),
  });

  observeApp(app);

  async function createApiKey(scopes: Scope[] | 'all', keyOptions: ApiKeyOptions = {}): Promise<string> {
    const { id, key } = await issueApiKey(db, {
      title: keyOptions.title ?? 'test key',
      scopes: scopes === 'all' ? SCOPES : scopes,
      expiresAt: keyOptions.expiresAt,
    });
    leaks.secret(key, `API key '${keyOptions.title ?? 'test key'}' from the fixture`);
    if (keyOptions.revoked) await db.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
    return key;
  }

  return {
    app,
    request: supertest.agent(app),
    db,
    provider,
    state,
    config,
    createApiKey,
    async close() {
      await backgroundTasksOf(app).settled();
      await state.close();
      await database.drop();
    },
  };
}

export interface SecondAppOptions {
  /** Its own database client (e.g. with other limits) instead of the first app's. */
  db?: DbHandle;
  /** Its shared state in this Redis (the first app's key prefix): a node of its own. */
  redis?: Redis;
  /** Settings that differ from the first app's. */
  config?: Partial<Config>;
}

export interface SecondApp {
  /** The express app itself, e.g. to listen on a port (test/support/server.ts). */
  app: Express;
  request: TestAgent;
  /** Waits for its background writes and closes its own shared state (not the database). */
  close(): Promise<void>;
}

/**
 * Another node of the same service over the first app's database: as every app the support starts,
 * it logs into the file's secret scan and its answers are scanned. It shares the first app's state
 * unless it has a client or a Redis connection of its own.
 */
export function startSecondApp(first: TestApp, options: SecondAppOptions = {}): SecondApp {
  const handle = options.db ?? { db: first.db, provider: first.provider };
  const logger = scannedLogger(undefined);
  const ownState = options.db !== undefined || options.redis !== undefined;
  const state = ownState
    ? createSharedState({
        db: handle.db,
        redis: options.redis,
        redisKeyPrefix: first.config.redisKeyPrefix,
        logger,
      })
    : first.state;
  const app = createApp({ ...handle, config: { ...first.config, ...options.config }, logger, state });
  observeApp(app);
  return {
    app,
    request: supertest.agent(app),
    async close() {
      await backgroundTasksOf(app).settled();
      if (ownState) await state.close();
    },
  };
}
