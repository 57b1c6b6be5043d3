import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { installTimeLimit, SQLITE_TIME_LIMIT_FUNCTION } from '../../src/db/sqliteTimeLimit.ts';
import { type SecondApp, startSecondApp, type TestApp } from '../support/app.ts';
import { testServerUrl } from '../support/database.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * SQLite runs a statement on the event loop's thread, so a costly content query carries a time
 * limit of its own (src/db/sqliteTimeLimit.ts); PostgreSQL's statement_timeout is tested in
 * test/db/client.test.ts. These tests assert no durations: a limit of 0 ms stops a query at its
 * first row, and a query that could never end by itself must be stopped.
 */

const onSqlite = testServerUrl() === undefined;

test('the time-limit function ends a query that would never end by itself', () => {
  const database = new Database(':memory:');
  try {
    installTimeLimit(database, 50);
    const endless = database.prepare(
      `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE ${SQLITE_TIME_LIMIT_FUNCTION}(?) = 1)
       SELECT count(*) AS c FROM n`,
    );
    expect(() => endless.get(Date.now())).toThrow('The query ran past its limit of 50 ms');
    // Within its limit, the function lets every row through.
    const short = database.prepare(
      `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 100 AND ${SQLITE_TIME_LIMIT_FUNCTION}(?) = 1)
       SELECT count(*) AS c FROM n`,
    );
    expect(short.get(Date.now())).toEqual({ c: 100 });
  } finally {
    database.close();
  }
});

(onSqlite ? describe : describe.skip)('a content query past the SQLite time limit', () => {
  let fixture: TestApp;
  let key: string;
  /** A second service on the same database whose content queries may run 0 ms. */
  let limited: DbHandle;
  let limitedApp: SecondApp;

  beforeAll(async () => {
    ({ app: fixture, key } = await startFixtureApp('all'));
    limited = await createDb(fixture.config.databaseUrl, { sqliteQueryTimeoutMs: 0 });
    limitedApp = await startSecondApp(fixture, { db: limited });
  });
  afterAll(async () => {
    await limitedApp?.close();
    await limited.db.$disconnect();
    await fixture.close();
  });

  test('the list is a 503 problem with Retry-After that says how to make it cheaper', async () => {
    const response = await limitedApp.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({ siteId: 1, wheres: [{ column: 'content', operator: 'Like', value: '%a%' }] });
    expect(response.status).toBe(503);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['retry-after']).toMatch(/^\d+$/);
    expect(response.body.type).toBe('https://cms.example/problems/service-unavailable');
    expect(response.body.detail).toContain('narrow the filter');
    expect(response.text).not.toMatch(/SELECT|cms_time_limit/);
  });

  test('stl/contents is stopped the same way', async () => {
    const response = await limitedApp.request
      .get('/api/v1/stl/contents')
      .query({ siteId: 1, scope: 'All' })
      .set('X-SS-API-KEY', key);
    expect(response.status).toBe(503);
    expect(response.body.detail).toContain('narrow the filter');
  });

  test('the same connection then serves other reads, and the default limit lets the list through', async () => {
    const ping = await limitedApp.request.get('/api/v1/ping').set('X-SS-API-KEY', key);
    expect(ping.status).toBe(200);
    const content = await limitedApp.request.get('/api/v1/contents/1/2/1').set('X-SS-API-KEY', key);
    expect(content.status).toBe(200);
    expect(content.body.title).toBe('Alpha release notes');
    const listed = await fixture.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({ siteId: 1, wheres: [{ column: 'content', operator: 'Like', value: '%a%' }] });
    expect(listed.status).toBe(200);
    expect(listed.body.totalCount).toBeGreaterThan(0);
  });
});
