import { randomBytes, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/*
 * Everything one test run (one `jest` command) makes outside its own processes — PostgreSQL
 * databases, Redis keys, temporary folders — carries the run's id in its name. The global teardown
 * (test/support/globalTeardown.ts) then removes exactly what this run made, whether its tests
 * passed, failed or timed out, and never what another run sharing the same servers still uses.
 */

/** Set by the global setup before the workers start; they inherit it. */
export const RUN_ID_VARIABLE = 'CMS_TEST_RUN_ID';
const RUN_ID = /^[0-9a-f]{8}$/;

export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

/** This run's id; throws outside a jest run (the global setup sets it). */
export function testRunId(): string {
  const id = process.env[RUN_ID_VARIABLE];
  if (id === undefined || !RUN_ID.test(id)) {
    throw new Error(`${RUN_ID_VARIABLE} is not set: run the tests with jest, whose config sets it`);
  }
  return id;
}

/** What the names of this run's PostgreSQL databases start with. */
export function databaseNamePrefix(run: string = testRunId()): string {
  return `cms_test_${run}`;
}

/** A Redis key prefix of its own for one app or test, within this run's. */
export function testRedisKeyPrefix(): string {
  return `${redisRunPrefix()}${randomUUID()}:`;
}

/**
 * What every Redis key of this run starts with. Dots, not hyphens: keys of test code that still
 * names its prefix `cms-test-<uuid>:` can then never look like a run's.
 */
export function redisRunPrefix(run: string = testRunId()): string {
  return `cms-test.${run}.`;
}

/** The `mkdtemp` prefix of a scratch folder of this run, in the system's temporary folder. */
export function scratchPrefix(label: string): string {
  return join(tmpdir(), `${scratchRunPrefix()}${label}-`);
}

/** What the names of this run's scratch folders start with. */
export function scratchRunPrefix(run: string = testRunId()): string {
  return `cms-test-${run}-`;
}
