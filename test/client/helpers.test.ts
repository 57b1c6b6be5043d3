import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  CmsProblemError,
  CmsResponseError,
  createCmsClient,
  deleteContent,
  getContent,
  listContents,
  updateContent,
} from '../../client/src/index.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * The client package's helpers, from its source, against the service over HTTP on the fixture
 * (test/support/fixtures.ts). test/client/package.test.ts runs the packed tarball; this file pins
 * what each helper answers and throws.
 */

let app: TestApp;
let typed: TypedClient;

beforeAll(async () => {
  const started = await startFixtureApp(['Contents']);
  app = started.app;
  typed = await startClient(app, started.key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

describe('listContents', () => {
  test('wheres and orders are sent as given; the page and the count come back', async () => {
    const { totalCount, contents } = await listContents(typed.client, {
      siteId: 1,
      channelId: 2,
      wheres: [
        { column: 'hits', operator: '>=', value: 5 },
        { column: 'title', operator: 'NotLike', value: '%notes%' },
      ],
      orders: [{ column: 'hits', desc: false }],
      perPage: 2,
    });
    // Channel 2 and its descendant 3; contents 1 and 4 have "notes" in the title, 8 is recycled.
    expect(totalCount).toBe(2);
    expect(contents.map((content) => [content.id, content.hits])).toEqual([
      [3, 5],
      [2, 25],
    ]);
  });

  test('a page past the last one is empty with the real count', async () => {
    const page = await listContents(typed.client, { siteId: 1, perPage: 3, page: 9 });
    expect(page).toEqual({ totalCount: 7, contents: [] });
  });

  test('a rule the service refuses throws a CmsProblemError naming the field', async () => {
    const error = await rejection(
      listContents(typed.client, { siteId: 1, wheres: [{ column: 'nope', value: '1' }] }),
    );
    expect(error).toBeInstanceOf(CmsProblemError);
    const problem = error as CmsProblemError;
    expect(problem.status).toBe(400);
    expect(problem.type).toBe('https://cms.example/problems/validation');
    expect(problem.problem.errors?.map((item) => item.path)).toEqual(['/body/wheres/0']);
    expect(problem.problem.errors?.[0]?.message).toContain('nope');
    expect(problem.message).toBe(`400 ${problem.problem.title}: ${problem.problem.detail}`);
    expect(problem.name).toBe('CmsProblemError');
  });
});

describe('getContent, updateContent, deleteContent', () => {
  test('get answers the content; update changes only the fields sent and persists them', async () => {
    const content = await getContent(typed.client, { siteId: 1, channelId: 3, id: 3 });
    expect([content.id, content.title, content.author, content.hits]).toEqual([
      3,
      'Tech deep dive 100%',
      'ann',
      5,
    ]);
    // A content read from the service is its own reference (siteId, channelId, id).
    const updated = await updateContent(typed.client, content, { title: 'Tech deep dive, revised', hits: 6 });
    expect([updated.id, updated.title, updated.author, updated.hits]).toEqual([
      3,
      'Tech deep dive, revised',
      'ann',
      6,
    ]);
    const stored = await app.db.content.findUniqueOrThrow({ where: { id: 3 } });
    expect([stored.title, stored.hits, stored.author]).toEqual(['Tech deep dive, revised', 6, 'ann']);
  });

  test('delete answers the content as form B; afterwards get throws not-found', async () => {
    const ref = { siteId: 1, channelId: 4, id: 6 };
    const deleted = await deleteContent(typed.client, ref);
    expect([deleted.id, deleted.channelId, deleted.title, deleted.isChecked]).toEqual([
      6,
      4,
      'product two',
      'False',
    ]);
    expect((await app.db.content.findUniqueOrThrow({ where: { id: 6 } })).recycled).toBe(true);
    const error = await rejection(getContent(typed.client, ref));
    expect(error).toBeInstanceOf(CmsProblemError);
    expect([(error as CmsProblemError).status, (error as CmsProblemError).type]).toEqual([
      404,
      'https://cms.example/problems/not-found',
    ]);
    const again = await rejection(deleteContent(typed.client, ref));
    expect((again as CmsProblemError).status).toBe(404);
  });

  test('an update the service refuses changes nothing', async () => {
    const ref = { siteId: 1, channelId: 2, id: 2 };
    const error = await rejection(updateContent(typed.client, ref, { isChecked: 'true', checkedLevel: 0 }));
    expect((error as CmsProblemError).status).toBe(400);
    expect((await getContent(typed.client, ref)).checkedLevel).toBe(2);
  });
});

describe('credentials and answers that are not the service', () => {
  test('without credentials the helpers throw the 401 problem', async () => {
    const error = await rejection(listContents(typed.clientAs({}), { siteId: 1 }));
    expect(error).toBeInstanceOf(CmsProblemError);
    expect([(error as CmsProblemError).status, (error as CmsProblemError).type]).toEqual([
      401,
      'https://cms.example/problems/unauthorized',
    ]);
  });

  test('an error page that is not problem+json (a proxy) throws a CmsResponseError', async () => {
    const client = createCmsClient({
      baseUrl: typed.baseUrl,
      fetch: async () =>
        new Response('<html><body>Bad gateway</body></html>', {
          status: 502,
          statusText: 'Bad Gateway',
          headers: { 'content-type': 'text/html' },
        }),
    });
    const error = await rejection(getContent(client, { siteId: 1, channelId: 2, id: 2 }));
    expect(error).toBeInstanceOf(CmsResponseError);
    expect(error).not.toBeInstanceOf(CmsProblemError);
    const response = error as CmsResponseError;
    expect([response.status, response.contentType, response.message]).toEqual([
      502,
      'text/html',
      '502 Bad Gateway (not a problem+json answer)',
    ]);
  });
});
