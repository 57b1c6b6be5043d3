import { createServer, type Server } from 'node:http';
import pino, { type Logger } from 'pino';
import { type Config, ConfigError, ensureTokenSecret, loadConfig } from './config.ts';
import { createDb, type Db, prepareDatabase } from './db/client.ts';
import { applyMigrations, MigrationError } from './db/migrate/index.ts';
import { connectRedis } from './db/redis.ts';
import { seedDemo } from './domain/seed/demo.ts';
import { backgroundTasksOf, createApp } from './http/app.ts';
import { isUniqueViolation } from './http/databaseErrors.ts';
import { describeError } from './http/logging.ts';

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

/** A fresh database gets the demo site and a bootstrap key, so that the first request can be made at once. */
async function seedWhenEmpty(db: Db, config: Config, logger: Logger): Promise<void> {
  if ((await db.site.count()) > 0) return;
  let apiKey: string;
  try {
    ({ apiKey } = await seedDemo(db));
  } catch (error) {
    // Nodes started together race to seed; the one that loses finds the demo already there.
    if (!isUniqueViolation(error)) throw error;
    logger.info('demo data was seeded by another node');
    return;
  }
  // Printed, not logged: the key is shown once to whoever started the service, and kept out of log storage.
  process.stdout.write(
    [
      '',
      'Seeded the demo site. Bootstrap API key (all scopes; shown only this once):',
      `  ${apiKey}`,
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
  const handle = createDb(config.databaseUrl);
  const { db, provider } = handle;
  await prepareDatabase(handle);
  await seedWhenEmpty(db, config, logger);
  const resolved = await ensureTokenSecret(config, db);

  const redis = config.redisUrl === undefined ? undefined : await connectRedis(config.redisUrl);
  const app = createApp({ db, provider, config: resolved, logger, ...(redis && { redis }) });
  const server = createServer(app);
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
