import type { Server } from 'node:http';
import pino, { type Logger } from 'pino';
import { type Config, ConfigError, ensureTokenSecret, loadConfig } from './config.ts';
import { createDb, type Db, prepareDatabase } from './db/client.ts';
import { applyMigrations, MigrationError } from './db/migrate/index.ts';
import { connectRedis } from './db/redis.ts';
import { closeSandboxes } from './db/sandbox/index.ts';
import { DomainError } from './domain/errors.ts';
import { type DemoSecrets, describeDemoSecrets, seedDemoWhenEmpty } from './domain/seed/demo.ts';
import { backgroundTasksOf, createApp } from './http/app.ts';
import { describeError } from './http/logging.ts';
import { createHttpServer } from './http/server.ts';
import { createSharedState } from './state/index.ts';

/** No request's statement may hold a PostgreSQL connection longer than this (a 503 after it). */
const STATEMENT_TIMEOUT_MS = 15_000;

/** In-flight requests get this long to finish after SIGTERM/SIGINT before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

/**
 * An empty database gets the demo site, its accounts and a bootstrap key, so that the first request
 * can be made at once, when the operator asked for it or runs on the embedded default (config.seedDemo).
 */
async function seedWhenEmpty(db: Db, config: Config, logger: Logger): Promise<void> {
  if (!config.seedDemo) return;
  let secrets: DemoSecrets | undefined;
  try {
    secrets = await seedDemoWhenEmpty(db, config.databaseUrl);
  } catch (error) {
    // The seed is one transaction: nothing of it was written, and the service is still useful.
    if (!(error instanceof DomainError)) throw error;
    logger.warn({ err: describeError(error) }, 'demo data not seeded');
    return;
  }
  if (secrets === undefined) return;
  const { apiKey } = secrets;
  // Printed, not logged: the secrets are shown once to whoever started the service, and kept out of log storage.
  process.stdout.write(
    [
      '',
      'Seeded the demo site. Bootstrap API key (all scopes; shown only this once):',
      `  ${apiKey}`,
      'Demo sign-in (random passwords; shown only this once):',
      ...describeDemoSecrets(secrets),
      'Try:',
      `  curl -s -X POST http://localhost:${config.port}/api/v1/contents \\`,
      `    -H 'X-SS-API-KEY: ${apiKey}' -H 'Content-Type: application/json' -d '{"siteId":1}'`,
      '',
    ].join('\n'),
  );
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function main(): Promise<void> {
  const config = readConfig();
  const logger = pino({ level: config.logLevel });

  const { applied } = await applyMigrations(config.databaseUrl);
  if (applied.length > 0) logger.info({ applied }, `applied ${applied.length} migration(s)`);
  const handle = createDb(config.databaseUrl, { statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  const { db, provider } = handle;
  await prepareDatabase(handle);
  await seedWhenEmpty(db, config, logger);
  const resolved = await ensureTokenSecret(config, db);

  const redis = config.redisUrl === undefined ? undefined : await connectRedis(config.redisUrl);
  const state = createSharedState({ db, redis, redisKeyPrefix: config.redisKeyPrefix, logger });
  const app = createApp({ db, provider, config: resolved, logger, state });
  const server = createHttpServer(app);
  let stopping = false;
  // Keep-alive clients are told to reconnect elsewhere once shutdown has begun.
  server.on('request', (_req, res) => {
    if (stopping) res.setHeader('Connection', 'close');
  });
  await listen(server, config.port);
  logger.info({ port: config.port, provider }, 'listening');

  async function shutdown(signal: NodeJS.Signals): Promise<void> {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const deadline = setTimeout(() => {
      logger.warn(`requests still running after ${SHUTDOWN_GRACE_MS} ms; closing their connections`);
      server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(deadline);
    await backgroundTasksOf(app).settled();
    await state.close();
    await closeSandboxes();
    await db.$disconnect();
    await redis?.quit();
    logger.info('stopped');
    process.exit(0);
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      shutdown(signal).catch((error: unknown) => {
        logger.error({ err: describeError(error) }, 'shutdown failed');
        process.exit(1);
      });
    });
  }
}

main().catch((error: unknown) => {
  // Startup failures (migrations, a port in use) are reported without stack or connection strings;
  // a migration problem is already one sentence for the operator.
  const reason = error instanceof MigrationError ? error.message : JSON.stringify(describeError(error));
  process.stderr.write(`Could not start: ${reason}\n`);
  process.exit(1);
});
