import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.ts';
import { loadStlFixture } from './fixture.ts';

/*
 * stl/sqlContent over HTTP, on the database the run selects: the first row of a query in the
 * sandbox of stl/sqlContents (whose walls test/stl/sqlContents.test.ts and its neighbours prove).
 */

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  await loadStlFixture(app, new Date());
  key = await app.createApiKey(['STL']);
});
afterAll(async () => {
  await app.close();
});

const PATH = '/api/v1/stl/sqlContent';
const run = (queryString: string, as = key) =>
  app.request.get(PATH).query({ queryString }).set('X-SS-API-KEY', as);

describe('answers', () => {
  test('the first row, keyed by column name', async () => {
    const response = await run('SELECT id, siteName, siteDir FROM siteserver_Site ORDER BY taxis, id');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ value: { id: 3, siteName: 'Archive', siteDir: 'archive' } });
  });

  test('null when the query has no row', async () => {
    expect((await run('SELECT id FROM siteserver_Content WHERE id = 103')).body).toEqual({ value: null });
  });

  test('the cursor stops after the first row: an endless query answers at once', async () => {
    const response = await run(
      'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n',
    );
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ value: { x: 1 } });
  });
});

describe('refusals', () => {
  test('400: a statement the sandbox refuses, a private table, another parameter', async () => {
    const write = await run('DELETE FROM siteserver_Content');
    expect(write.status).toBe(400);
    expect(write.body.detail).toMatch(/^queryString /);
    expect((await run('SELECT key FROM ApiKey')).status).toBe(400);
    const other = await app.request
      .get(PATH)
      .query({ queryString: 'SELECT 1 AS one', connectionString: 'x' })
      .set('X-SS-API-KEY', key);
    expect(other.status).toBe(400);
    expect(JSON.stringify(other.body)).toContain('connectionString');
  });

  test('401 without credentials, 403 with a key without the STL scope', async () => {
    expect((await app.request.get(PATH).query({ queryString: 'SELECT 1 AS one' })).status).toBe(401);
    expect((await run('SELECT 1 AS one', await app.createApiKey(['Contents']))).status).toBe(403);
  });

  test("429 when the caller's share of the sandbox is taken (shared with stl/sqlContents)", async () => {
    const { gate } = app.services.sandbox;
    const { perCaller } = gate.limits;
    const endless =
      'WITH RECURSIVE forever(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM forever) SELECT count(*) AS n FROM forever';
    const held = Array.from({ length: perCaller }, () =>
      app.request
        .get('/api/v1/stl/sqlContents')
        .query({ queryString: endless })
        .set('X-SS-API-KEY', key)
        .then((response) => response),
    );
    for (let tries = 0; gate.load.running + gate.load.waiting < perCaller; tries++) {
      if (tries > 600) throw new Error('the held queries never reached the sandbox');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const refused = await run('SELECT 1 AS one');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body.detail).toMatch(/^The SQL sandbox is busy/);
    await Promise.all(held);
  });

  test('503 with Retry-After when the sandbox cannot reach its database', async () => {
    const unreachable =
      app.provider === 'sqlite'
        ? 'file:/nonexistent-cms-dir/cms.db'
        : 'postgresql://postgres@127.0.0.1:1/cms';
    const broken = await startTestApp({ config: { databaseUrl: unreachable } });
    try {
      const response = await broken.request
        .get(PATH)
        .query({ queryString: 'SELECT id FROM siteserver_Site' })
        .set('X-SS-API-KEY', await broken.createApiKey(['STL']));
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBeDefined();
    } finally {
      await broken.close();
    }
  });
});
