import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { installTimeLimit, SQLITE_TIME_LIMIT_FUNCTION } from '../../src/db/sqliteTimeLimit.ts';
import { type SecondApp, startSecondApp, type TestApp } from '../support/app.ts';
import { testServerUrl } from '../support/database.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { WORST_CASE_WHERES, worstCaseTexts } from '../support/worstCase.ts';

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
    if (response.status !== 503) console.log(JSON.stringify(response.body).slice(0, 1500));
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
    if (response.status !== 503) console.log(JSON.stringify(response.body).slice(0, 1500));
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

  test('a list asked again is compiled once, but its time limit counts from each statement it sends', async () => {
    // A service whose content queries may run 2 s: the requests below take milliseconds.
    const timed = await createDb(fixture.config.databaseUrl, { sqliteQueryTimeoutMs: 2_000 });
    const timedApp = await startSecondApp(fixture, { db: timed });
    try {
      const filter = {
        siteId: 1,
        perPage: 2,
        wheres: [{ column: 'content', operator: 'Like', value: '%e%' }],
      };
      const list = () => timedApp.request.post('/api/v1/contents').set('X-SS-API-KEY', key).send(filter);
      const first = await list();
      expect(first.status).toBe(200);
      // A write moves the site's generation, so the same request picks its page again, with the
      // query compiled above; past the limit after the first, a time kept from then would end it.
      const written = await timedApp.request
        .post('/api/v1/contents/1/2/1/actions/update')
        .set('X-SS-API-KEY', key)
        .send({ title: 'Alpha release notes, again' });
      expect(written.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const again = await list();
      expect(again.status).toBe(200);
      expect(again.body.totalCount).toBe(first.body.totalCount);
      expect(again.body.contents.map((c: { id: number }) => c.id)).toEqual(
        first.body.contents.map((c: { id: number }) => c.id),
      );
    } finally {
      await timedApp.close();
      await timed.db.$disconnect();
    }
  });
});

/*
 * Data shaped for the worst case (issue: one 5 MB body against 20 long NotLike patterns held a
 * SQLite worker for ~46 s), test/support/worstCase.ts: stored straight in the database, past the
 * contract's own limits, as data imported or written by other means can be.
 */
describe('the worst-case filter on the worst-case data', () => {
  let fixture: TestApp;
  let key: string;
  let limited: DbHandle;
  let limitedApp: SecondApp;

  beforeAll(async () => {
    ({ app: fixture, key } = await startFixtureApp('all'));
    for (const id of [1, 2, 3]) await fixture.db.content.update({ where: { id }, data: worstCaseTexts() });
    // SQLite: a limit far above what any other request here takes, so that the expensive request
    // runs long beside them (the `_` shape cannot end by itself within it). PostgreSQL's statements
    // never run on the event loop; its timeout is set well below the filter's cost.
    limited = await createDb(fixture.config.databaseUrl, {
      sqliteQueryTimeoutMs: 10_000,
      statementTimeoutMs: 100,
    });
    limitedApp = await startSecondApp(fixture, { db: limited });
  }, 120_000);
  afterAll(async () => {
    await limitedApp?.close();
    await limited?.db.$disconnect();
    await fixture?.close();
  });

  const wheres = WORST_CASE_WHERES;

  test('is ended at its time limit with the documented 503, while ping and get-by-id go on being answered', async () => {
    let pending = true;
    const expensive = limitedApp.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({ siteId: 1, wheres })
      .then((response) => {
        pending = false;
        return response;
      });
    // Other requests, one after the other, for as long as the expensive one runs: they are
    // answered beside it, not after it (a worker whose thread ran the statement would answer none).
    let answeredMeanwhile = 0;
    while (pending) {
      const [ping, content] = await Promise.all([
        limitedApp.request.get('/api/v1/ping'),
        limitedApp.request.get('/api/v1/contents/1/3/4').set('X-SS-API-KEY', key),
      ]);
      expect(ping.status).toBe(200);
      expect(content.status).toBe(200);
      expect(content.body.id).toBe(4);
      if (pending) answeredMeanwhile++;
    }
    const response = await expensive;
    expect(response.status).toBe(503);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['retry-after']).toMatch(/^\d+$/);
    expect(response.body.detail).toContain('narrow the filter');
    expect(response.text).not.toMatch(/SELECT|cms_like|lower\(/);
    // Several rounds, not one that slipped in before the statement began (a loaded machine may take
    // a second per round, hence the long limit above).
    if (onSqlite) expect(answeredMeanwhile).toBeGreaterThanOrEqual(3);
  }, 120_000);

  test('more filters at once than PostgreSQL’s pool has connections: a get-by-id sent after them is answered first', async () => {
    // PostgreSQL: a timeout the crowded filters all run into (12 at once share two cores).
    const crowded = await createDb(fixture.config.databaseUrl, {
      sqliteQueryTimeoutMs: 5000,
      statementTimeoutMs: 1000,
    });
    const crowdedApp = await startSecondApp(fixture, { db: crowded });
    try {
      // The app's first request opens its pool's first connection: made before the crowd arrives.
      expect((await crowdedApp.request.get('/api/v1/contents/1/3/4').set('X-SS-API-KEY', key)).status).toBe(
        200,
      );
      let filtersAnswered = 0;
      const filters = Array.from({ length: 12 }, () =>
        crowdedApp.request
          .post('/api/v1/contents')
          .set('X-SS-API-KEY', key)
          .send({ siteId: 1, wheres })
          .then((response) => {
            filtersAnswered += 1;
            return response;
          }),
      );
      const content = await crowdedApp.request.get('/api/v1/contents/1/3/4').set('X-SS-API-KEY', key);
      const answeredBeforeGet = filtersAnswered;
      expect(content.status).toBe(200);
      expect(content.body.id).toBe(4);
      // Point reads find a free connection: at most COSTLY_READS_AT_ONCE filters hold one
      // (src/db/costlyReads.ts), so the get never waits for the whole crowd (on a fast machine the
      // filters may finish, on a loaded one the first batch may reach its timeout, before it). On
      // SQLite the filters run in the read thread.
      expect(answeredBeforeGet).toBeLessThan(filters.length);
      for (const response of await Promise.all(filters)) expect([200, 503]).toContain(response.status);
    } finally {
      await crowdedApp.close();
      await crowded.db.$disconnect();
    }
  }, 120_000);

  test('the long texts match as LIKE says when the filter has the time it needs', async () => {
    const response = await fixture.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({
        siteId: 1,
        wheres: [
          { column: 'body', operator: 'Like', value: `%${'A'.repeat(998)}B` },
          { column: 'summary', operator: 'NotLike', value: `%${'a'.repeat(997)}c%` },
          { column: 'title', operator: 'Like', value: `a_${'%a'.repeat(100)}%` },
          { column: 'author', operator: 'Like', value: `%${'a%'.repeat(499)}b` },
        ],
      });
    expect(response.status).toBe(200);
    expect(response.body.contents.map((content: { id: number }) => content.id).sort()).toEqual([1, 2, 3]);
    const none = await fixture.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({ siteId: 1, wheres: [{ column: 'body', operator: 'NotLike', value: `%${'a'.repeat(998)}B` }] });
    expect(none.status).toBe(200);
    expect(none.body.contents.map((content: { id: number }) => content.id)).not.toContain(1);
  }, 120_000);
});
