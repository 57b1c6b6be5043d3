import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { testServerUrl } from '../support/database.ts';

/*
 * PostgreSQL connections the server ends under the service (pg_terminate_backend, as in a failover
 * or a restart of the database: SQLSTATE 57P01, then pg's "not queryable" for a client that saw it)
 * are the documented 503 with Retry-After, never a 500, and the pool recovers by itself. Only the
 * backends of this test's own database are ended (filtered by datname).
 */

const postgres = testServerUrl() !== undefined;

let app: TestApp;
let typed: TypedClient;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  key = await app.createApiKey('all');
  typed = await startClient(app, key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

/** A request that reads the database (every authenticated request checks its key there first). */
async function listSites(): Promise<{
  status: number;
  retryAfter: string | null;
  type: string | null;
  body: string;
}> {
  const response = await fetch(`${typed.baseUrl}/api/v1/stl/sites`, { headers: { 'X-SS-API-KEY': key } });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    type: response.headers.get('content-type'),
    body: await response.text(),
  };
}

/** Ends every backend of this test's database except the one that asks. */
async function terminateOwnBackends(): Promise<number> {
  const [ended] = await app.db.$queryRawUnsafe<{ ended: bigint | number }[]>(
    `SELECT count(pg_terminate_backend(pid)) AS ended FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  return Number(ended?.ended);
}

(postgres ? test : test.skip)(
  'connections ended by the server answer 503 with Retry-After, never 500, and the service recovers',
  async () => {
    const statuses: number[] = [];
    for (let round = 0; round < 5; round += 1) {
      // A pool of several open connections, then all of them ended at once.
      const warm = await Promise.all(Array.from({ length: 8 }, listSites));
      expect(warm.map((answer) => answer.status)).toEqual(Array(8).fill(200));
      expect(await terminateOwnBackends()).toBeGreaterThan(0);
      const answers = await Promise.all(Array.from({ length: 8 }, listSites));
      for (const answer of answers) {
        statuses.push(answer.status);
        if (answer.status === 200) continue;
        expect(answer.status).toBe(503);
        expect(answer.retryAfter).toMatch(/^\d+$/);
        expect(answer.type).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(answer.body)).toMatchObject({
          status: 503,
          detail: 'The database is unavailable; retry later',
        });
      }
    }
    expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    // The pool replaced the ended connections: every request succeeds again.
    const after = await Promise.all(Array.from({ length: 8 }, listSites));
    expect(after.map((answer) => answer.status)).toEqual(Array(8).fill(200));
  },
);
