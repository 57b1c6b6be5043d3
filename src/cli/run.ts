import { type Config, ConfigError, loadConfig } from '../config.ts';
import { createDb } from '../db/client.ts';
import { assertDatabaseExists, connectionFailureSentence } from '../db/connectionFailure.ts';
import { applyMigrations, MigrationError } from '../db/migrate/index.ts';
import { DomainError } from '../domain/errors.ts';
import { type Action, type CliIo, COMMANDS, type StandaloneAction } from './commands.ts';
import { CommandFailure, UsageError } from './options.ts';

/*
 * The command-line tool. Exit codes: 0 done, 1 the work failed (bad data, refused), 2 the command
 * line or the environment is wrong. The command line is checked before the database is touched.
 */

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export function usage(): string {
  return [
    'Usage: npm run cms -- <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.flatMap((command) => [`  ${command.usage}`, `      ${command.summary}`]),
    '  cms help',
    '      Show this help.',
    '',
    'Environment: DATABASE_URL (default file:./data/cms.db); pending migrations are applied first.',
  ].join('\n');
}

const HELP = new Set(['help', '--help', '-h']);

export async function runCli(
  argv: readonly string[],
  io: CliIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined) {
    io.err(usage());
    return EXIT_USAGE;
  }
  if (HELP.has(name)) {
    io.out(usage());
    return EXIT_OK;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) {
    io.err(`cms: unknown command '${name}'\n\n${usage()}`);
    return EXIT_USAGE;
  }
  if (args.some((arg) => HELP.has(arg))) {
    io.out(`Usage: ${command.usage}\n  ${command.summary}`);
    return EXIT_OK;
  }

  let action: Action | StandaloneAction;
  let config: Config;
  try {
    action = await command.prepare(args);
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`cms ${name}: ${error.message}\nUsage: ${command.usage}`);
      return EXIT_USAGE;
    }
    if (error instanceof ConfigError) {
      io.err(error.message);
      return EXIT_USAGE;
    }
    if (error instanceof CommandFailure) {
      io.err(`cms ${name}: ${error.message}`);
      return EXIT_FAILED;
    }
    throw error;
  }

  if ('standalone' in command) {
    try {
      return await (action as StandaloneAction)({ config, ...io });
    } catch (error) {
      if (!(error instanceof CommandFailure)) throw error;
      io.err(`cms ${name}: ${error.message}`);
      return EXIT_FAILED;
    }
  }

  try {
    // The tool never creates a database: a mistyped name is refused, not migrated into existence.
    await assertDatabaseExists(config.databaseUrl);
    const { applied } = await applyMigrations(config.databaseUrl);
    for (const migration of applied) io.err(`Applied migration ${migration}`);
  } catch (error) {
    // Said in one sentence; the engine's own dump helps nobody at a terminal.
    const unreachable = connectionFailureSentence(error, config.databaseUrl);
    if (unreachable !== undefined) {
      io.err(`cms ${name}: ${unreachable}`);
      return EXIT_FAILED;
    }
    if (!(error instanceof MigrationError)) throw error;
    io.err(`cms ${name}: cannot prepare the database: ${error.message}`);
    return EXIT_FAILED;
  }
  const { db, provider } = await createDb(config.databaseUrl);
  try {
    return await (action as Action)({ db, provider, config, ...io });
  } catch (error) {
    // A lock another process keeps (seed-demo waits for migrations and other seeders) is one sentence too.
    if (error instanceof MigrationError || error instanceof CommandFailure) {
      io.err(`cms ${name}: ${error.message}`);
      return EXIT_FAILED;
    }
    const unreachable = connectionFailureSentence(error, config.databaseUrl);
    if (unreachable !== undefined) {
      io.err(`cms ${name}: ${unreachable}`);
      return EXIT_FAILED;
    }
    if (!(error instanceof DomainError)) throw error;
    io.err(`cms ${name}: ${error.message}`);
    for (const detail of error.fields) io.err(`  ${detail.message}`);
    return EXIT_FAILED;
  } finally {
    await db.$disconnect();
  }
}
