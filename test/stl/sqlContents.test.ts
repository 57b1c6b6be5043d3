import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pino from 'pino';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { testServerUrl } from '../support/database.ts';
import { loadStlFixture } from './fixture.ts';
import { LEGIT_QUERIES } from './sqlLegit.ts';

/*
 * stl/sqlContents over HTTP, on the database the run selects (SQLite or PostgreSQL). The legitimate
 * corpus expects the same rows on both; refusals are 400 problems on queryString that name the reason.
 */

let app: TestApp;
let key: string;
let typed: TypedClient;

beforeAll(async () => {
  app = await startTestApp();
  await loadStlFixture(app, new Date());
  key = await app.createApiKey(['STL']);
  typed = await startClient(app, key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

/** Through the typed client: the answer is what the contract declares. */
const query = async (queryString: string) => {
  const { data, error, response } = await typed.client.GET('/api/v1/stl/sqlContents', {
    params: { query: { queryString } },
  });
  expect([response.status, error]).toEqual([200, undefined]);
  return data?.value;
};

const run = (queryString: string, extra: Record<string, string> = {}) =>
  app.request
    .get('/api/v1/stl/sqlContents')
    .query({ queryString, ...extra })
    .set('X-SS-API-KEY', key);

/** UTC `yyyy-MM-dd HH:mm:ss`, the views' date text. */
const utc = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

describe('legitimate queries: the same rows on SQLite and PostgreSQL', () => {
  test.each(LEGIT_QUERIES.map(({ name, sql, rows }) => [name, sql, rows] as const))(
    '%s',
    async (_name, sql, rows) => {
      expect(await query(sql)).toEqual(rows);
    },
  );

  test('a whole site row, shaped like the original table', async () => {
    expect(await query('SELECT * FROM siteserver_Site WHERE id = 2')).toEqual([
      {
        id: 2,
        siteName: 'English news',
        siteDir: 'en/News',
        tableName: 'siteserver_Content',
        isRoot: 'False',
        parentId: 0,
        taxis: 5,
        settingsXml: '',
      },
    ]);
  });

  test('a whole content row: dates as UTC text, flags as words, the body as content', async () => {
    const stored = await app.db.content.findUniqueOrThrow({ where: { id: 104 } });
    expect(await query('SELECT * FROM siteserver_Content WHERE id = 104')).toEqual([
      {
        id: 104,
        channelId: 12,
        siteId: 1,
        addUserName: 'admin',
        lastEditUserName: 'editor',
        lastEditDate: utc(stored.lastEditDate),
        addDate: utc(stored.addDate),
        taxis: 1,
        groupNameCollection: 'a,b',
        tags: 'x,y',
        sourceId: 0,
        referenceId: 0,
        checkedLevel: 1,
        hits: 20,
        isChecked: 'True',
        isTop: 'False',
        isRecommend: 'False',
        isHot: 'True',
        isColor: 'False',
        title: 'Content 104',
        subTitle: '',
        imageUrl: '',
        videoUrl: '',
        fileUrl: '',
        linkUrl: 'https://example.org/104',
        content: stored.body,
        summary: 'Sum & more',
        author: 'Ann',
        source: '',
      },
    ]);
  });

  test('a whole channel row', async () => {
    const stored = await app.db.channel.findUniqueOrThrow({ where: { id: 11 } });
    expect(await query('SELECT * FROM siteserver_Channel WHERE id = 11')).toEqual([
      {
        id: 11,
        channelName: 'News',
        siteId: 1,
        contentModelPluginId: '',
        contentRelatedPluginIds: '',
        parentId: 1,
        parentsPath: '1',
        parentsCount: 1,
        childrenCount: 1,
        indexName: 'news',
        groupNameCollection: 'top,nav',
        taxis: 1,
        addDate: utc(stored.addDate),
        imageUrl: '',
        content: '',
        filePath: '',
        channelFilePathRule: '',
        contentFilePathRule: '',
        linkUrl: '',
        linkType: 'None',
        channelTemplateId: 0,
        contentTemplateId: 0,
        keywords: 'news,press',
        description: '',
      },
    ]);
  });

  test('pending and recycled contents are not in the view', async () => {
    expect(await query('SELECT id FROM siteserver_Content WHERE id IN (103, 107)')).toEqual([]);
  });
});

describe('refusals', () => {
  test.each([
    ['SELECT * FROM "User"', 'has a quoted identifier'],
    ['SELECT 1; DELETE FROM siteserver_Site', 'has more than one statement'],
    ['DELETE FROM siteserver_Site', 'is not a SELECT statement|cannot be read'],
    ['SELECT * FROM ApiKey', "reads 'ApiKey', which is not a public view"],
    ['SELECT sqlite_version() AS v', 'calls sqlite_version\\(\\), which is not on the function allow-list'],
    ['SELECT pg_sleep(5)', 'calls pg_sleep\\(\\), which is not on the function allow-list'],
  ])('%s → 400 naming the reason', async (sql, reason) => {
    const response = await run(sql);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.type).toBe('https://cms.example/problems/validation');
    expect(response.body.detail).toMatch(new RegExp(`^queryString (${reason})`));
    expect(response.body.errors).toEqual([
      { path: '/query/queryString', message: expect.stringMatching(reason) },
    ]);
  });

  test.each(['connectionString', 'databaseType'])('a %s parameter is a 400 naming it', async (name) => {
    const response = await run('SELECT id FROM siteserver_Site', { [name]: 'Server=evil;Database=master' });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain(name);
  });

  test('missing, empty and over-long queryString are 400s', async () => {
    const missing = await app.request.get('/api/v1/stl/sqlContents').set('X-SS-API-KEY', key);
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('queryString');
    expect((await run('')).status).toBe(400);
    const long = await run(`SELECT id AS ${'a'.repeat(10_000)} FROM siteserver_Site`);
    expect(long.status).toBe(400);
    expect(JSON.stringify(long.body)).toContain('queryString');
  });

  test('no credentials 401, a key without the STL scope 403', async () => {
    const path = '/api/v1/stl/sqlContents';
    const query = { queryString: 'SELECT id FROM siteserver_Site' };
    expect((await app.request.get(path).query(query)).status).toBe(401);
    const other = await app.createApiKey(['Contents']);
    const response = await app.request.get(path).query(query).set('X-SS-API-KEY', other);
    expect(response.status).toBe(403);
  });
});

test('a sandbox that cannot reach its database is a 503 with Retry-After, never a 400', async () => {
  const unreachable =
    app.provider === 'sqlite' ? 'file:/nonexistent-cms-dir/cms.db' : 'postgresql://postgres@127.0.0.1:1/cms';
  const broken = await startTestApp({ config: { databaseUrl: unreachable } });
  try {
    const brokenKey = await broken.createApiKey(['STL']);
    const response = await broken.request
      .get('/api/v1/stl/sqlContents')
      .query({ queryString: 'SELECT id FROM siteserver_Site' })
      .set('X-SS-API-KEY', brokenKey);
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBeDefined();
    expect(response.body.detail).toBe('The database is unavailable; retry later');
  } finally {
    await broken.close();
  }
});

test('the query text never reaches the logs, whether it runs or is refused', async () => {
  const lines: string[] = [];
  const logged = await startTestApp({
    logger: pino({ level: 'trace' }, { write: (line: string) => lines.push(line) }),
  });
  try {
    const loggedKey = await logged.createApiKey(['STL']);
    for (const queryString of [
      'SELECT siteDir AS marker_ok FROM siteserver_Site',
      'SELECT marker_refused FROM ApiKey',
    ]) {
      const response = await logged.request
        .get('/api/v1/stl/sqlContents')
        .query({ queryString })
        .set('X-SS-API-KEY', loggedKey);
      expect([200, 400]).toContain(response.status);
    }
    expect(lines.join('')).toContain('queryString=[REDACTED]');
    expect(lines.join('')).not.toMatch(/marker_ok|marker_refused/);
  } finally {
    await logged.close();
  }
});

describe('limits', () => {
  test('a query that never ends is stopped at the time limit (400) while the service keeps answering', async () => {
    let settled = false;
    const runaway = run(
      'WITH RECURSIVE forever(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM forever) SELECT count(*) AS n FROM forever',
    ).then((response) => {
      settled = true;
      return response;
    });
    const ping = await app.request.get('/api/v1/ping');
    expect(ping.status).toBe(200);
    expect(settled).toBe(false);
    const response = await runaway;
    expect(response.status).toBe(400);
    expect(response.body.detail).toBe(
      `queryString ran longer than the time limit of ${app.config.stlSqlTimeoutMs} ms and was stopped`,
    );
    // The sandbox is ready again for the next query.
    expect((await run('SELECT count(*) AS n FROM siteserver_Site')).body).toEqual({ value: [{ n: 3 }] });
  });

  test('the row cap stops the cursor: an endless recursive query answers the first rows', async () => {
    const capped = await startTestApp({ config: { stlSqlMaxRows: 4 } });
    try {
      const cappedKey = await capped.createApiKey(['STL']);
      const response = await capped.request
        .get('/api/v1/stl/sqlContents')
        .query({
          queryString: 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n',
        })
        .set('X-SS-API-KEY', cappedKey);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ value: [{ x: 1 }, { x: 2 }, { x: 3 }, { x: 4 }] });
    } finally {
      await capped.close();
    }
  });
});

/** Polls until the condition holds (no wall-clock assertion: the machine may be slow). */
async function until(condition: () => boolean): Promise<void> {
  for (let tries = 0; !condition(); tries++) {
    if (tries > 600) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('fair sharing', () => {
  const endless =
    'WITH RECURSIVE forever(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM forever) SELECT count(*) AS n FROM forever';
  const retryAfter = () => String(Math.ceil(app.config.stlSqlTimeoutMs / 1000));
  const busy = (response: {
    status: number;
    headers: Record<string, string>;
    body: { detail?: unknown };
  }) => {
    expect(response.status).toBe(429);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['retry-after']).toBe(retryAfter());
    return response.body.detail;
  };

  test("a caller holds at most its share; one more of its queries is a 429 saying the sandbox is busy, others' are not", async () => {
    const { gate } = app.services.sandbox;
    const { perCaller } = gate.limits;
    // supertest sends a request once it is awaited or then'd.
    const held = Array.from({ length: perCaller }, () => run(endless).then((response) => response));
    await until(() => gate.load.running + gate.load.waiting === perCaller);
    expect(busy(await run('SELECT 1 AS one'))).toBe(
      `The SQL sandbox is busy: this caller already has ${perCaller} queries running or waiting (at most ${perCaller}); retry in ${retryAfter()} s`,
    );
    // Another key's query takes its turn and is answered.
    const otherKey = await app.createApiKey(['STL']);
    const other = await app.request
      .get('/api/v1/stl/sqlContents')
      .query({ queryString: 'SELECT 1 AS one' })
      .set('X-SS-API-KEY', otherKey);
    expect([other.status, other.body]).toEqual([200, { value: [{ one: 1 }] }]);
    // The first ran to its time limit; the others ran too, or waited past their bound (429).
    const statuses = (await Promise.all(held)).map((response) => response.status);
    expect(statuses[0]).toBe(400);
    expect(statuses.filter((status) => status !== 400 && status !== 429)).toEqual([]);
    // The share is given back: the first caller runs again.
    expect((await run('SELECT 2 AS two')).body).toEqual({ value: [{ two: 2 }] });
  });

  test('a full queue is a 429 for everyone, and the sandbox answers again once it drains', async () => {
    const { gate } = app.services.sandbox;
    const { capacity, maxWaiting, perCaller } = gate.limits;
    const places = capacity + maxWaiting;
    const keys = await Promise.all(
      Array.from({ length: Math.ceil(places / perCaller) + 1 }, () => app.createApiKey(['STL'])),
    );
    const as = (apiKey: string, queryString: string) =>
      app.request.get('/api/v1/stl/sqlContents').query({ queryString }).set('X-SS-API-KEY', apiKey);
    const held = Array.from({ length: places }, (_, index) =>
      as(keys[Math.floor(index / perCaller)] as string, endless).then((response) => response),
    );
    await until(() => gate.load.running === capacity && gate.load.waiting === maxWaiting);
    expect(busy(await as(keys.at(-1) as string, 'SELECT 1 AS one'))).toBe(
      `The SQL sandbox is busy: every place to run or wait is taken; retry in ${retryAfter()} s`,
    );
    const statuses = (await Promise.all(held)).map((response) => response.status);
    // Each ran to its time limit (400), or waited longer than the queries ahead of it could run (429).
    expect(statuses.filter((status) => status !== 400 && status !== 429)).toEqual([]);
    expect(statuses.filter((status) => status === 400).length).toBeGreaterThanOrEqual(capacity);
    expect((await as(keys.at(-1) as string, 'SELECT 1 AS one')).body).toEqual({ value: [{ one: 1 }] });
  }, 120_000);
});

test('columns aliased constructor or __proto__ are answered like any other alias', async () => {
  const response = await run(
    "SELECT id AS constructor, siteName AS __proto__, 'x' AS hasownproperty FROM siteserver_Site WHERE id = 2",
  );
  expect(response.status).toBe(200);
  // Parsed from the raw text, where __proto__ is an own key like any other.
  const [row] = (JSON.parse(response.text) as { value: Record<string, unknown>[] }).value;
  expect(Object.entries(row ?? {})).toEqual([
    ['constructor', 2],
    ['__proto__', 'English news'],
    ['hasownproperty', 'x'],
  ]);
});

(testServerUrl() === undefined ? test.skip : test)(
  'PostgreSQL: a sandbox connection the server ends while idle costs nothing; the next query reconnects',
  async () => {
    expect(await query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    // Every idle connection of this test's database but this one ends, as in a server restart.
    const [ended] = await app.db.$queryRawUnsafe<{ ended: bigint | number }[]>(
      `SELECT count(pg_terminate_backend(pid)) AS ended FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle'`,
    );
    expect(Number(ended?.ended)).toBeGreaterThan(0);
    // Let the pool hear of it (the 'error' event of an idle client).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
  },
);
