import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.ts';
import { loadStlFixture } from './fixture.ts';
import { HOSTILE_DIR, HOSTILE_MAX_BYTES, HOSTILE_QUERIES } from './sqlHostile.ts';

/*
 * The hostile corpus over HTTP, on the database the run selects: every query is a 400 that names
 * its reason, and afterwards every table and the schema are exactly as before. Rate limiting is
 * off and the key's last use is written before the first checksum, so the pipeline itself writes
 * nothing during the run.
 */

let app: TestApp;
let key: string;

beforeAll(async () => {
  // No query here expects the time limit: a generous one keeps the size cap what stops the oversized
  // answers, however slow a loaded machine makes them (2 s was once not enough on PostgreSQL).
  app = await startTestApp({
    config: { rateLimitPerMinute: 0, stlSqlMaxBytes: HOSTILE_MAX_BYTES, stlSqlTimeoutMs: 20_000 },
  });
  await loadStlFixture(app, new Date());
  key = await app.createApiKey(['STL']);
});
afterAll(async () => {
  await app.close();
});

const json = (value: unknown) =>
  JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item));

/** A digest of the schema and of every row of every table, read through the service's own client. */
async function checksum(): Promise<string> {
  const hash = createHash('sha256');
  const query = (sql: string) => app.db.$queryRawUnsafe<Record<string, unknown>[]>(sql);
  if (app.provider === 'sqlite') {
    const schema = await query('SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name');
    hash.update(json(schema));
    for (const row of schema.filter((item) => item.type === 'table')) {
      hash.update(json(await query(`SELECT * FROM "${String(row.name)}" ORDER BY rowid`)));
    }
  } else {
    hash.update(
      json(
        await query(
          "SELECT table_name, column_name, data_type, column_default FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2",
        ),
      ),
    );
    hash.update(
      json(await query("SELECT viewname, definition FROM pg_views WHERE schemaname = 'public' ORDER BY 1")),
    );
    hash.update(
      json(
        await query(
          "SELECT table_name, privilege_type FROM information_schema.role_table_grants WHERE grantee = 'cms_stl_reader' ORDER BY 1, 2",
        ),
      ),
    );
    hash.update(
      json(
        await query("SELECT rolname, rolcanlogin, rolsuper FROM pg_roles WHERE rolname = 'cms_stl_reader'"),
      ),
    );
    const tables = await query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
    for (const { tablename } of tables) {
      hash.update(
        json(
          await query(
            `SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS h FROM "${String(tablename)}" t`,
          ),
        ),
      );
    }
  }
  return hash.digest('hex');
}

test(`${HOSTILE_QUERIES.length} hostile queries are refused with a 400 naming the reason, and change nothing`, async () => {
  expect(HOSTILE_QUERIES.length).toBeGreaterThanOrEqual(80);
  const warmUp = await app.request
    .get('/api/v1/stl/sqlContents')
    .query({ queryString: 'SELECT count(*) AS n FROM siteserver_Site' })
    .set('X-SS-API-KEY', key);
  expect(warmUp.body).toEqual({ value: [{ n: 3 }] });
  await app.services.background.settled();
  const before = await checksum();

  const unexpected: string[] = [];
  for (const { sql, reason, params, only } of HOSTILE_QUERIES) {
    if (only !== undefined && only !== app.provider) continue;
    const response = await app.request
      .get('/api/v1/stl/sqlContents')
      .query({ queryString: sql, ...params })
      .set('X-SS-API-KEY', key);
    const detail = typeof response.body?.detail === 'string' ? response.body.detail : '';
    if (response.status !== 400 || !reason.test(detail)) {
      unexpected.push(`${response.status} ${JSON.stringify(sql.slice(0, 80))}: ${detail}`);
    }
  }
  expect(unexpected).toEqual([]);

  await app.services.background.settled();
  expect(await checksum()).toBe(before);
  // The checksum does see a change of one value.
  await app.db.site.update({ where: { id: 3 }, data: { siteName: 'Archive!' } });
  expect(await checksum()).not.toBe(before);
  await app.db.site.update({ where: { id: 3 }, data: { siteName: 'Archive' } });
  for (const suffix of [
    '-attach.db',
    '-vacuum.db',
    '-copy.csv',
    '-stacked.db',
    '-stacked-vacuum.db',
    '-lo',
    '-file',
  ]) {
    expect(existsSync(`${HOSTILE_DIR}${suffix}`)).toBe(false);
  }
});
