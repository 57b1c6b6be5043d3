/**
 * Migrations without Prisma's native engine (see src/db/migrate):
 *   deploy        apply pending migrations to DATABASE_URL
 *   new NAME      create a migration from prisma/schema.prisma for every provider
 *   status        compare DATABASE_URL's history with the migrations folder (exit 1 unless up to date)
 *   drift         check that the migrations of every provider build exactly the model (exit 1 if not)
 *   reset         empty DATABASE_URL (SQLite: delete the file)
 */
import { join, relative } from 'node:path';
import { DEFAULT_DATABASE_URL } from '../src/db/client.ts';
import {
  applyMigrations,
  checkDrift,
  createMigration,
  type MigrationStatus,
  migrationStatus,
  PROJECT_ROOT,
  resetDatabase,
} from '../src/db/migrate/index.ts';

const USAGE = 'usage: tsx scripts/db.ts deploy | new NAME | status | drift | reset';

/** Never prints a password that a DATABASE_URL may carry. */
function redact(databaseUrl: string): string {
  return databaseUrl.replace(/^(\w+:\/\/[^:/@]*):[^@]*@/, '$1:***@');
}

async function deploy(url: string): Promise<number> {
  const { applied } = await applyMigrations(url);
  if (applied.length === 0) console.log(`${redact(url)}: no pending migration`);
  for (const name of applied) console.log(`${redact(url)}: applied ${name}`);
  return 0;
}

async function create(name: string | undefined): Promise<number> {
  if (!name) {
    console.error(USAGE);
    return 2;
  }
  const result = await createMigration(name);
  if (result.name === null) {
    console.log('the migrations already match prisma/schema.prisma: no migration created');
    return 0;
  }
  for (const { provider, path } of result.created) {
    console.log(`${provider}: created ${relative(PROJECT_ROOT, join(path, 'migration.sql'))}`);
  }
  return 0;
}

function describeStatus(url: string, status: MigrationStatus): string[] {
  const lines = [
    `${redact(url)} (${status.provider}): ${status.migrations.length} migration(s) in the folder`,
  ];
  const groups: [string, string[]][] = [
    ['not yet applied', status.pending],
    ['applied but missing from the folder', status.unknown],
    ['failed (fix the database, then mark it rolled back)', status.failed],
    ['edited after being applied', status.edited],
  ];
  for (const [label, names] of groups) {
    if (names.length > 0) lines.push(`  ${label}:`, ...names.map((name) => `    ${name}`));
  }
  lines.push(status.upToDate ? '  database schema is up to date' : '  database schema is NOT up to date');
  return lines;
}

async function status(url: string): Promise<number> {
  const result = await migrationStatus(url);
  console.log(describeStatus(url, result).join('\n'));
  return result.upToDate ? 0 : 1;
}

async function drift(): Promise<number> {
  let code = 0;
  for (const report of await checkDrift()) {
    if (report.inSync) {
      console.log(`${report.provider}: migrations match prisma/schema.prisma`);
      continue;
    }
    code = 1;
    console.log(`${report.provider}: DRIFT — the migrations do not build prisma/schema.prisma; they lack:`);
    console.log(report.difference.replace(/^/gm, '  '));
  }
  if (code !== 0) console.log('create a migration with `npm run db:new -- <name>`');
  return code;
}

async function reset(url: string): Promise<number> {
  await resetDatabase(url);
  console.log(`${redact(url)}: emptied`);
  return 0;
}

async function main(args: string[]): Promise<number> {
  const url = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const [command, ...rest] = args;
  switch (command) {
    case 'deploy':
      return deploy(url);
    case 'new':
      return create(rest[0]);
    case 'status':
      return status(url);
    case 'drift':
      return drift();
    case 'reset':
      return reset(url);
    default:
      console.error(USAGE);
      return 2;
  }
}

let exitCode: number;
try {
  exitCode = await main(process.argv.slice(2));
} catch (error) {
  console.error(
    `db ${process.argv[2] ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  exitCode = 1;
}
// The schema engine may leave timers behind; the command is finished.
process.exit(exitCode);
