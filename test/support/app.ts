import type { Express } from 'express';
import type { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { composeServices, type GivenParts } from '../../src/compose.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import type { DbHandle } from '../../src/db/client.ts';
import { issueApiKey } from '../../src/domain/apiKeys/issueApiKey.ts';
import { SYSTEM_ACTOR } from '../../src/domain/events/actor.ts';
import { SCOPES, type Scope } from '../../src/domain/principal.ts';
import { type AppShape, createApp } from '../../src/http/app.ts';
import type { Services } from '../../src/http/services.ts';
import type { RestartWorkers } from '../../src/operations/types.ts';
import { createTestDatabase } from './database.ts';
import { leaks, observeApp } from './leaks.ts';
import { testRedisKeyPrefix } from './run.ts';

export interface ApiKeyOptions {
  expiresAt?: Date;
  revoked?: boolean;
  title?: string;
}

/** The app's services' parts a test reads directly (the state: in the given Redis, else the database). */
type ServiceParts = Pick<Services, 'db' | 'provider' | 'state'>;

export interface TestApp extends ServiceParts {
  app: Express;
  /** Requests go through the whole pipeline: logging, validation, security, handler, error mapper. */
  request: TestAgent;
  /** What the app runs on, composed as the worker composes it (src/compose.ts). */
  services: Services;
  /** The app's configuration, including the token secret (to sign access tokens in tests). */
  config: Config & { cmsSecret: string };
  /** Stores a new key with these scopes and returns the key itself. */
  createApiKey(scopes: Scope[] | 'all', options?: ApiKeyOptions): Promise<string>;
  /** Closes the app's services (after their background writes), then deletes the database. */
  close(): Promise<void>;
}

/**
 * The parts a test brings (the rest is composed as the worker composes it): its own handlers,
 * a Redis for the shared state (under the config's key prefix) instead of the database, metrics
 * (wired as the worker wires them: requests counted and timed, and the database client's queries).
 */
export interface TestAppOptions extends Pick<AppShape, 'handlers'>, Pick<GivenParts, 'redis' | 'metrics'> {
  /**
   * Where the app logs, besides the file's secret scan (test/support/leaks.ts), which sees every
   * line at every level whatever this logger's level.
   */
  logger?: Logger;
  /** Settings that differ from the defaults, e.g. a small rate limit. */
  config?: Partial<Config>;
  /**
   * What restartSystem reaches, in place of a supervisor (tests have none): e.g. a recorder. Absent,
   * the app is an unsupervised process, whose restart answers false.
   */
  restart?: RestartWorkers;
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
  const restart = options.restart;
  let services: Services;
  try {
    services = await composeServices(config, logger, {
      db: database.handle,
      ...(options.redis && { redis: options.redis }),
      ...(metrics && { metrics }),
      ...(restart && { restart: async () => restart }),
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
  const { state } = services;
  const app = createApp(services, options.handlers && { handlers: options.handlers });
  observeApp(app);

  async function createApiKey(scopes: Scope[] | 'all', keyOptions: ApiKeyOptions = {}): Promise<string> {
    const { id, key } = await issueApiKey(
      db,
      {
        title: keyOptions.title ?? 'test key',
        scopes: scopes === 'all' ? SCOPES : scopes,
        expiresAt: keyOptions.expiresAt,
      },
      SYSTEM_ACTOR,
    );
    leaks.secret(key, `API key '${keyOptions.title ?? 'test key'}' from the fixture`);
    if (keyOptions.revoked) await db.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
    return key;
  }

  return {
    app,
    request: supertest.agent(app),
    services,
    db,
    provider,
    state,
    config,
    createApiKey,
    async close() {
      await services.close();
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
  /** The node's express app, e.g. to listen on a port of its own (test/support/client.ts, server.ts). */
  app: Express;
  request: TestAgent;
  services: Services;
  /** Closes its services: what they made (its own state, its sandbox), not the database. */
  close(): Promise<void>;
}

/**
 * Another node of the same service over the first app's database: as every app the support starts,
 * it logs into the file's secret scan and its answers are scanned. It shares the first app's state
 * unless it has a client or a Redis connection of its own.
 */
export async function startSecondApp(first: TestApp, options: SecondAppOptions = {}): Promise<SecondApp> {
  const ownState = options.db !== undefined || options.redis !== undefined;
  const services = await composeServices({ ...first.config, ...options.config }, scannedLogger(undefined), {
    db: options.db ?? first.services,
    ...(options.redis && { redis: options.redis }),
    ...(!ownState && { state: first.state }),
  });
  const app = createApp(services);
  observeApp(app);
  return { app, request: supertest.agent(app), services, close: () => services.close() };
}
