import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createDb, type DbHandle, type DbOptions, providerOfUrl } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate/index.ts';
import {
  createDatabase,
  dropDatabase,
  uniqueDatabaseName,
  withDatabase,
} from '../../src/db/migrate/postgres.ts';
import { databaseNamePrefix, scratchPrefix } from './run.ts';

export interface TestDatabase {
  url: string;
  handle: DbHandle;
  /** Disconnects and deletes the database. */
  drop(): Promise<void>;
}

export interface EmptyDatabase {
  url: string;
  /** Deletes the database; whoever connected must have disconnected. */
  drop(): Promise<void>;
}

/** PostgreSQL server of the run, or undefined for SQLite (TEST_DATABASE_URL unset). */
export function testServerUrl(): string | undefined {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return undefined;
  if (providerOfUrl(url) !== 'postgresql') throw new Error('TEST_DATABASE_URL must be a postgresql:// URL');
  return url;
}

/**
 * A new database without tables: a SQLite file in a fresh temporary folder, or, with
 * TEST_DATABASE_URL set, a uniquely named database on that server (test files run in parallel).
 * Both names carry the run's id, so the global teardown removes what a failed file left.
 */
export async function createEmptyDatabase(): Promise<EmptyDatabase> {
  const server = testServerUrl();
  if (server === undefined) {
    const dir = await mkdtemp(scratchPrefix('db'));
    // An empty file is an empty SQLite database: the service and the tool open it without being
    // told to create a database (CREATE_DATABASE).
    await writeFile(join(dir, 'cms.db'), '');
    return { url: `file:${join(dir, 'cms.db')}`, drop: () => rm(dir, { recursive: true, force: true }) };
  }
  const name = uniqueDatabaseName(databaseNamePrefix());
  await createDatabase(server, name);
  return { url: withDatabase(server, name), drop: () => dropDatabase(server, name) };
}

/** A new database with every migration applied, and a client connected to it. */
/** A migrated database and a client on it, made with these options (e.g. a query observer). */
export async function createTestDatabase(options: DbOptions = {}): Promise<TestDatabase> {
  const empty = await createEmptyDatabase();
  let handle: DbHandle;
  try {
    await applyMigrations(empty.url);
    handle = await createDb(empty.url, options);
  } catch (error) {
    await empty.drop();
    throw error;
  }
  let dropping: Promise<void> | undefined;
  return {
    url: empty.url,
    handle,
    drop() {
      dropping ??= handle.db.$disconnect().finally(() => empty.drop());
      return dropping;
    },
  };
}
