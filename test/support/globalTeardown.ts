import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { dropDatabase } from '../../src/db/migrate/postgres.ts';
import { openHandlesReportPrefix } from './openHandles.ts';
import { databaseNamePrefix, RUN_ID_VARIABLE, redisRunPrefix, scratchRunPrefix } from './run.ts';

/*
 * After the last test file, pass or fail: removes what this run made and a test did not remove
 * itself (a file that failed or timed out before its afterAll): its PostgreSQL databases, its Redis
 * keys and its scratch folders, each found by the run's id in its name (test/support/run.ts).
 * Nothing of another run is touched, whatever it is doing on the same servers.
 */

/** The run's databases on the TEST_DATABASE_URL server. */
async function dropRunDatabases(run: string): Promise<string[]> {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) return [];
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  let names: string[];
  try {
    // `_` is LIKE's one-character wildcard: escaped, the prefix matches only itself.
    const pattern = `${databaseNamePrefix(run).replaceAll('_', '\\_')}\\_%`;
    const result = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname LIKE $1',
      [pattern],
    );
    names = result.rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
  for (const name of names) await dropDatabase(server, name);
  return names;
}

/** The run's keys on the TEST_REDIS_URL server. */
async function deleteRunKeys(run: string): Promise<number> {
  const url = process.env.TEST_REDIS_URL;
  if (!url) return 0;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  let deleted = 0;
  try {
    // Key names are matched literally up to the `*`: the prefix holds no glob characters.
    const stream = redis.scanStream({ match: `${redisRunPrefix(run)}*`, count: 1000 });
    for await (const keys of stream as AsyncIterable<string[]>) {
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    }
  } finally {
    await redis.quit();
  }
  return deleted;
}

/** The run's folders in the system's temporary folder (SQLite databases, scratch copies). */
async function removeRunFolders(run: string): Promise<string[]> {
  const prefix = scratchRunPrefix(run);
  const names = (await readdir(tmpdir())).filter((name) => name.startsWith(prefix));
  await Promise.all(names.map((name) => rm(join(tmpdir(), name), { recursive: true, force: true })));
  return names;
}

export interface Removed {
  databases: string[];
  redisKeys: number;
  folders: string[];
}

/** Removes everything of run `run` on this run's servers and in the temporary folder. */
export async function removeRunLeftovers(run: string): Promise<Removed> {
  const failures: string[] = [];
  const attempt = <T>(work: Promise<T>, nothing: T): Promise<T> =>
    work.catch((error: unknown) => {
      failures.push(String(error));
      return nothing;
    });
  const [databases, redisKeys, folders] = await Promise.all([
    attempt(dropRunDatabases(run), []),
    attempt(deleteRunKeys(run), 0),
    attempt(removeRunFolders(run), []),
  ]);
  if (failures.length > 0) {
    throw new Error(
      `the teardown of test run ${run} could not remove everything:\n  ${failures.join('\n  ')}`,
    );
  }
  return { databases, redisKeys, folders };
}

/** Prints (to stderr) and removes the reports of workers jest had to end (test/support/leakEnvironment.ts). */
async function printOpenHandleReports(run: string): Promise<void> {
  const prefix = openHandlesReportPrefix(run);
  const names = (await readdir(tmpdir())).filter((name) => name.startsWith(prefix));
  for (const name of names) {
    const file = join(tmpdir(), name);
    process.stderr.write(await readFile(file, 'utf8'));
    await rm(file, { force: true });
  }
}

export default async function globalTeardown(): Promise<void> {
  const run = process.env[RUN_ID_VARIABLE];
  if (run === undefined) return;
  await printOpenHandleReports(run);
  await removeRunLeftovers(run);
}
