import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createDatabase, dropDatabase } from '../../src/db/migrate/postgres.ts';
import { testServerUrl } from '../support/database.ts';
import { removeRunLeftovers } from '../support/globalTeardown.ts';
import {
  databaseNamePrefix,
  newRunId,
  redisRunPrefix,
  scratchRunPrefix,
  testRedisKeyPrefix,
  testRunId,
} from '../support/run.ts';

/*
 * The global teardown removes what one run made — databases, Redis keys, scratch folders — and
 * nothing of another run on the same servers. Driven with two made-up runs (never this run's own
 * id: other files of this run are still using what it made), on the servers this run uses
 * (PostgreSQL with TEST_DATABASE_URL, Redis with TEST_REDIS_URL).
 */

const server = testServerUrl();
const redisUrl = process.env.TEST_REDIS_URL;
const mine = newRunId();
const other = newRunId();

/** The server's databases whose name starts with `prefix`, in order. */
async function databaseNames(prefix: string): Promise<string[]> {
  if (server === undefined) return [];
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname',
      [prefix],
    );
    return rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
}

const databasesOf = (run: string) => databaseNames(`${databaseNamePrefix(run)}_`);

async function foldersOf(run: string): Promise<string[]> {
  return (await readdir(tmpdir())).filter((name) => name.startsWith(scratchRunPrefix(run))).sort();
}

describe('the global teardown', () => {
  const redis = redisUrl === undefined ? undefined : new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  afterAll(async () => {
    await removeRunLeftovers(other);
    await redis?.quit();
  });

  test('names what this run makes after its id', () => {
    expect(testRunId()).toMatch(/^[0-9a-f]{8}$/);
    expect(testRedisKeyPrefix()).toMatch(new RegExp(`^cms-test\\.${testRunId()}\\.[0-9a-f-]{36}:$`));
    expect(databaseNamePrefix()).toBe(`cms_test_${testRunId()}`);
  });

  test("removes one run's databases, keys and folders, and leaves another run's alone", async () => {
    for (const run of [mine, other]) {
      for (const label of ['a', 'b']) await mkdtemp(join(tmpdir(), `${scratchRunPrefix(run)}${label}-`));
      if (server !== undefined) {
        // `_` in a name must not act as a wildcard: `cms_test_<run>X…` belongs to no run.
        for (const suffix of ['_1', '_2'])
          await createDatabase(server, `${databaseNamePrefix(run)}${suffix}`);
      }
      if (redis !== undefined) {
        await redis.set(`${redisRunPrefix(run)}x:counter`, '1', 'EX', 600);
        await redis.set(`${redisRunPrefix(run)}y:mark`, '1', 'EX', 600);
      }
    }
    const lookalike = `${databaseNamePrefix(mine)}x`;
    if (server !== undefined) await createDatabase(server, lookalike);
    try {
      const removed = await removeRunLeftovers(mine);

      expect(removed.folders).toHaveLength(2);
      for (const folder of removed.folders) expect(folder.startsWith(scratchRunPrefix(mine))).toBe(true);
      expect(await foldersOf(mine)).toEqual([]);
      expect(await foldersOf(other)).toHaveLength(2);
      if (server !== undefined) {
        expect(removed.databases.sort()).toEqual([
          `${databaseNamePrefix(mine)}_1`,
          `${databaseNamePrefix(mine)}_2`,
        ]);
        expect(await databasesOf(mine)).toEqual([]);
        expect(await databasesOf(other)).toEqual([
          `${databaseNamePrefix(other)}_1`,
          `${databaseNamePrefix(other)}_2`,
        ]);
        expect(await databaseNames(lookalike)).toEqual([lookalike]);
      }
      if (redis !== undefined) {
        expect(removed.redisKeys).toBe(2);
        expect(await redis.exists(`${redisRunPrefix(mine)}x:counter`, `${redisRunPrefix(mine)}y:mark`)).toBe(
          0,
        );
        expect(
          await redis.exists(`${redisRunPrefix(other)}x:counter`, `${redisRunPrefix(other)}y:mark`),
        ).toBe(2);
      }
    } finally {
      if (server !== undefined) await dropDatabase(server, lookalike);
    }
  });
});
