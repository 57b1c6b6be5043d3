import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { TEXT_MATCHING_LOCK } from '../../src/db/costlyReads.ts';
import type { TestApp } from '../support/app.ts';
import { testServerUrl } from '../support/database.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { type Listening, listen } from '../support/server.ts';

/*
 * On PostgreSQL, list reads whose filter matches text patterns take turns: one at a time per
 * database, whichever process sends it (an advisory lock), one at a time per process before that
 * (src/db/costlyReads.ts, docs/security/time-limits.md "Text matching takes turns"). A test
 * connection holds the lock as another node's read would; no durations are asserted.
 */

const onPostgres = testServerUrl() !== undefined;

const LIKE = { siteId: 1, perPage: 100, wheres: [{ column: 'title', operator: 'Like', value: '%' }] };
const PLAIN = { siteId: 1, perPage: 100 };

(onPostgres ? describe : describe.skip)('reads that match text patterns take turns', () => {
  let fixture: TestApp;
  let key: string;
  let server: Listening;
  let holder: pg.Client;

  beforeAll(async () => {
    ({ app: fixture, key } = await startFixtureApp(['Contents']));
    server = await listen(fixture.app);
    holder = new pg.Client({ connectionString: fixture.config.databaseUrl });
    await holder.connect();
  });
  afterAll(async () => {
    await holder?.end();
    await server?.close();
    await fixture?.close();
  });

  const list = (body: unknown) =>
    fetch(`${server.base}/api/v1/contents`, {
      method: 'POST',
      headers: { 'x-ss-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const ids = async (response: Response) =>
    ((await response.json()) as { contents: { id: number }[] }).contents.map((content) => content.id);

  test('several at once are all answered, each as it is answered alone', async () => {
    const alone = await list(LIKE);
    expect(alone.status).toBe(200);
    const expected = await ids(alone);
    expect(expected.length).toBeGreaterThan(1);
    const together = await Promise.all(Array.from({ length: 4 }, () => list(LIKE)));
    for (const response of together) {
      expect(response.status).toBe(200);
      expect(await ids(response)).toEqual(expected);
    }
  });

  test('while another process holds the turn: 503 with Retry-After; other reads are answered', async () => {
    await holder.query('SELECT pg_advisory_lock($1)', [TEXT_MATCHING_LOCK]);
    try {
      // Two at once: one waits for the database's turn, the other for this process's.
      const [plain, ...matching] = await Promise.all([list(PLAIN), list(LIKE), list(LIKE)]);
      expect(plain.status).toBe(200);
      expect((await ids(plain)).length).toBeGreaterThan(1);
      for (const response of matching) {
        const text = await response.text();
        expect(response.status).toBe(503);
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
        const problem = JSON.parse(text) as { type: string; detail: string };
        expect(problem.type).toBe('https://cms.example/problems/service-unavailable');
        expect(problem.detail).toContain('narrow the filter');
        expect(text).not.toMatch(/SELECT |pg_advisory|lock_timeout|55P03/);
      }
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [TEXT_MATCHING_LOCK]);
    }
    // The turn is free again: the same filter is answered.
    const after = await list(LIKE);
    expect(after.status).toBe(200);
    expect((await ids(after)).length).toBeGreaterThan(1);
  });

  test('once its reads are answered, the service holds no turn', async () => {
    const answered = await Promise.all([list(LIKE), list(LIKE)]);
    expect(answered.map((response) => response.status)).toEqual([200, 200]);
    const { rows } = await holder.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [
      TEXT_MATCHING_LOCK,
    ]);
    expect(rows[0]?.taken).toBe(true);
    await holder.query('SELECT pg_advisory_unlock($1)', [TEXT_MATCHING_LOCK]);
  });
});
