import cluster from 'node:cluster';
import pino, { type Logger } from 'pino';
import { type Config, ConfigError, loadConfig, newTokenSecret, SECRET_SETTING_KEY } from './config.ts';
import { createDb, DEFAULT_DATABASE_URL } from './db/client.ts';
import { assertDatabaseExists, connectionFailureSentence, MissingDatabase } from './db/connectionFailure.ts';
import { MigrationError } from './db/migrate/errors.ts';
import { DomainError } from './domain/errors.ts';
import type { DemoSecrets } from './domain/seed/demo.ts';
import { describeError } from './http/logging.ts';
import { type StartFailedMessage, StartFailure } from './startFailure.ts';
import { isPreparedMessage, killEarlyWorkers, type PreparedQuery, supervise } from './supervisor.ts';

/*
 * `npm start`, after its entry (src/main.ts) has forked the workers. The first process migrates the
 * database (under the migrations' cross-process lock), seeds it when asked and settles the token
 * secret, once; then it either supervises WORKERS worker processes (src/supervisor.ts) or, with
 * WORKERS=0, serves alone (src/worker.ts). A worker, started again from the entry by node:cluster,
 * goes straight to serving.
 */

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // A worker reads the environment its supervisor read: the supervisor says what is wrong, once.
    if (cluster.isWorker) process.exit(1);
    killEarlyWorkers();
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

const KEY_HINT =
  'API keys are never shown again after they are issued; to get one, run: ' +
  'npm run cms -- apikey create --title "my client" --scopes all';

/**
 * An empty database gets the demo site, its accounts and a bootstrap key, so that the first request
 * can be made at once, when the operator asked for it or runs on the embedded default (config.seedDemo).
 * Called only for a database that had no site: the seeder and Prisma's client (slow to load) are
 * loaded for that start only. (seedDemoWhenEmpty counts again, under the migrations' lock.)
 */
async function seedDemo(config: Config, logger: Logger): Promise<DemoSecrets | undefined> {
  const { seedDemoWhenEmpty } = await import('./domain/seed/demo.ts');
  const handle = await createDb(config.databaseUrl);
  const { db } = handle;
  try {
    return await seedDemoWhenEmpty(handle, config.databaseUrl);
  } catch (error) {
    // The seed is one transaction: nothing of it was written, and the service is still useful.
    if (!(error instanceof DomainError)) throw error;
    logger.warn({ err: describeError(error) }, 'demo data not seeded');
    return undefined;
  } finally {
    await db.$disconnect();
  }
}

async function printSeedSecrets(config: Config, secrets: DemoSecrets): Promise<void> {
  const { describeDemoSecrets } = await import('./domain/seed/demo.ts');
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

/**
 * What must happen once before anything serves: migrations, the demo seed, the token secret. On an
 * existing database (most starts) that is a few statements through the plain driver
 * (src/db/migrate/check.ts, src/db/preparation.ts); the schema engine and Prisma's client are
 * loaded only when there are migrations to apply or a demo to seed.
 */
async function prepare(config: Config, logger: Logger): Promise<void> {
  if (!config.createDatabase) {
    await assertDatabaseExists(config.databaseUrl).catch((error: unknown) => {
      if (!(error instanceof MissingDatabase)) throw error;
      throw new StartFailure(`${error.message}; create it, or set CREATE_DATABASE=true to have it created`);
    });
  }
  const { checkMigrations } = await import('./db/migrate/check.ts');
  if (!(await checkMigrations(config.databaseUrl)).status.upToDate) {
    // Workers never migrate: the schema engine and its glue are loaded by the first process only.
    const { applyMigrations } = await import('./db/migrate/index.ts');
    const { applied } = await applyMigrations(config.databaseUrl);
    if (applied.length > 0) logger.info({ applied }, `applied ${applied.length} migration(s)`);
  }
  const { openPreparation } = await import('./db/preparation.ts');
  const connection = await openPreparation(config.databaseUrl);
  try {
    await connection.applySettings();
    const secrets =
      config.seedDemo && (await connection.siteCount()) === 0 ? await seedDemo(config, logger) : undefined;
    if (secrets === undefined) {
      // No key is printed on this start: say how to get one.
      logger.info(KEY_HINT);
    } else {
      await printSeedSecrets(config, secrets);
    }
    // CMS_SECRET wins; otherwise the workers read the one stored here (ensureTokenSecret).
    if (config.cmsSecret === undefined) await connection.settingOnce(SECRET_SETTING_KEY, newTokenSecret());
  } finally {
    await connection.close();
  }
}

/**
 * The app (contract, validator, operations) is loaded only by a process that serves: a supervisor
 * that loaded it too spent a second or two of every start on code it never runs.
 */
async function serve(config: Config, logger: Logger, ready: () => Promise<void>): Promise<void> {
  const worker = await import('./worker.ts');
  await ready();
  await worker.serve(config, logger);
}

/**
 * A worker loads its code while the supervisor prepares the database, then asks whether that is
 * done and waits for the answer before touching the database. It has nothing to do if the
 * supervisor goes away meanwhile (its preparation failed): it exits.
 */
function preparedBySupervisor(): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (!isPreparedMessage(message)) return;
      process.off('message', onMessage);
      process.off('disconnect', onDisconnect);
      resolve();
    };
    const onDisconnect = () => process.exit(1);
    process.on('message', onMessage);
    process.on('disconnect', onDisconnect);
    const query: PreparedQuery = { cms: 'prepared?' };
    process.send?.(query);
  });
}

const alreadyPrepared = async () => undefined;

async function main(): Promise<void> {
  const config = readConfig();
  // A process that serves (a worker, or the only process with WORKERS=0) logs every request,
  // asynchronously (pino's default, whose buffer pino writes out at the process's exit): a line
  // written synchronously cost a single process a system call of every request. The supervisor
  // logs little, and its last lines come right before process.exit: written synchronously, none is
  // lost or overtaken at the exit.
  const serves = cluster.isWorker || config.workers === 0;
  const logger = serves
    ? pino({ level: config.logLevel })
    : pino({ level: config.logLevel }, pino.destination({ dest: 1, sync: true }));
  if (cluster.isWorker) {
    await serve(config, logger, preparedBySupervisor);
    return;
  }
  if (config.workers === 0) {
    await prepare(config, logger);
    await serve(config, logger, alreadyPrepared);
    return;
  }
  const prepared = prepare(config, logger);
  supervise({ workers: config.workers, logger, prepared, metrics: config.metrics });
  try {
    await prepared;
  } catch (error) {
    // The workers started meanwhile have nothing to serve: stopped before this process exits, they
    // cannot trip over its closed channel (a stack trace in the output for nothing).
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
    throw error;
  }
}

main().catch((error: unknown) => {
  // Startup failures (migrations, a port in use) are reported without stack or connection strings;
  // a migration problem is already one sentence for the operator, and so is a database that
  // cannot be reached (its URL with the password masked).
  const unreachable = connectionFailureSentence(error, process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  const reason =
    unreachable ??
    (error instanceof MigrationError || error instanceof StartFailure
      ? error.message
      : JSON.stringify(describeError(error)));
  if (cluster.isWorker && process.connected) {
    // The supervisor says it, once for all its workers.
    const message: StartFailedMessage = { cms: 'startFailed', reason };
    process.send?.(message, undefined, {}, () => process.exit(1));
    return;
  }
  process.stderr.write(`Could not start: ${reason}\n`);
  process.exit(1);
});
