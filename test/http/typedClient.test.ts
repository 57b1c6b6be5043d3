import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  type Content,
  createCmsClient,
  isProblem,
  PROBLEM_MEDIA_TYPE,
  type Problem,
  type ProblemType,
} from '../../client/src/index.ts';
import { signAccessToken } from '../../src/domain/crypto/tokens.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * The typed client is what makes the tests typed: every `@ts-expect-error` below is a line that must
 * NOT compile (tsc --noEmit runs over test/, and fails on a directive with no error under it). If the
 * contract or the generated types stopped catching one of these mistakes, the typecheck would fail.
 * Each of those calls also runs, so the server's answer to the same mistake is asserted too.
 */

let app: TestApp;
let key: string;
let typed: TypedClient;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents', 'Channels']));
  typed = await startClient(app, key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

const CONTENT = '/api/v1/contents/{siteId}/{channelId}/{id}' as const;

describe('requests the contract does not allow fail to compile', () => {
  test('a body field the request schema does not have (the server refuses it too)', async () => {
    const { error, response } = await typed.client.POST('/api/v1/contents', {
      // @ts-expect-error channelID is not a field of ListContentsRequest (channelId is)
      body: { siteId: 1, channelID: 2 },
    });
    expect(response.status).toBe(400);
    expect(error?.detail).toContain('channelID');
  });

  test('a field the schema does not have, inside a nested object of the body', async () => {
    const { error, response } = await typed.client.POST('/api/v1/contents', {
      // @ts-expect-error a where rule has column, operator and value; no `op`
      body: { siteId: 1, wheres: [{ column: 'hits', op: '>', value: 1 }] },
    });
    expect(response.status).toBe(400);
    expect(error?.errors).toEqual([{ path: '/body/wheres/0/op', message: "unknown field 'op'" }]);
  });

  test('a body field of the wrong type (the server refuses it too)', async () => {
    const { error, response } = await typed.client.POST('/api/v1/contents', {
      // @ts-expect-error siteId is an integer, not a string
      body: { siteId: 'main' },
    });
    expect(response.status).toBe(400);
    expect(error?.errors).toEqual([expect.objectContaining({ path: '/body/siteId' })]);
  });

  test('a missing required body field, a path that does not exist, a missing path parameter', async () => {
    // @ts-expect-error siteId is required
    const noSite = await typed.client.POST('/api/v1/contents', { body: { channelId: 2 } });
    expect(noSite.response.status).toBe(400);

    // @ts-expect-error the contract has no such path
    const unknownPath = await typed.client.GET('/api/v1/content/1/2/2');
    expect(unknownPath.response.status).toBe(404);

    // @ts-expect-error the content id is missing from the path parameters
    const noId = await typed.client.GET(CONTENT, { params: { path: { siteId: 1, channelId: 2 } } });
    expect(noId.response.status).toBe(400);
  });
});

describe('responses are read as the contract describes them', () => {
  test('a real call: values of form A, typed', async () => {
    const { data, error, response } = await typed.client.GET(CONTENT, {
      params: { path: { siteId: 1, channelId: 2, id: 2 } },
    });
    expect(response.status).toBe(200);
    expect(error).toBeUndefined();
    if (!data) throw new Error('a 200 has a body');
    // Asked without `fields`, the answer is the whole record: the first of its two forms.
    const whole: Content = data as Content;
    const title: string = whole.title;
    const hits: number = whole.hits;
    const groupNames: string[] = whole.groupNames;
    expect([title, hits, groupNames, data.checked, data.addDate]).toEqual([
      'Beta program',
      25,
      ['featured', 'home'],
      true,
      '2024-02-01 08:00:00',
    ]);

    // @ts-expect-error form A has no `name` field (it is `title`)
    expect(data.name).toBeUndefined();
    // @ts-expect-error hits is a number: a response that drifted to a string would not compile here
    const asText: string = data.hits;
    expect(typeof asText).toBe('number');
  });

  test('each success has its own body type: a channel has children, a content does not', async () => {
    const channel = await typed.client.GET('/api/v1/channels/{siteId}/{channelId}', {
      params: { path: { siteId: 1, channelId: 2 } },
    });
    expect(channel.data?.children.map((child) => [child.value, child.label])).toEqual([[3, 'Tech']]);
    const content = await typed.client.GET(CONTENT, { params: { path: { siteId: 1, channelId: 3, id: 3 } } });
    // @ts-expect-error form A of a content has no children
    expect(content.data?.children).toBeUndefined();
  });

  test('errors are problem+json bodies, with a closed set of types', async () => {
    const { data, error, response } = await typed.client.GET(CONTENT, {
      params: { path: { siteId: 1, channelId: 2, id: 999 } },
    });
    expect(data).toBeUndefined();
    expect(response.headers.get('content-type')).toMatch(
      new RegExp(`^${PROBLEM_MEDIA_TYPE.replace('+', '\\+')}`),
    );
    const problem: Problem | undefined = error;
    const type: ProblemType | undefined = problem?.type;
    expect(type).toBe('https://cms.example/problems/not-found');
    expect(problem).toMatchObject({ status: 404, title: 'Not Found' });
    expect(problem?.detail).toBe(problem?.message);
    expect(isProblem(error)).toBe(true);
    expect(isProblem({ status: 404 })).toBe(false);
    // @ts-expect-error a problem carries no stack (and the service never sends one)
    expect(problem?.stack).toBeUndefined();
    // @ts-expect-error not one of the contract's problem types
    expect(type === 'https://cms.example/problems/oops').toBe(false);
  });
});

describe('credentials', () => {
  test('the API key goes in X-SS-API-KEY; a header set on one request wins', async () => {
    const sent: (string | null)[] = [];
    const client = createCmsClient({
      baseUrl: typed.baseUrl,
      apiKey: key,
      fetch: (request) => {
        sent.push(request.headers.get('X-SS-API-KEY'));
        return fetch(request);
      },
    });
    const path = { params: { path: { siteId: 1, channelId: 2, id: 2 } } };
    expect((await client.GET(CONTENT, path)).data?.id).toBe(2);
    const other = await app.createApiKey(['STL']);
    const overridden = await client.GET(CONTENT, { ...path, headers: { 'X-SS-API-KEY': other } });
    expect(overridden.response.status).toBe(403);
    expect(sent).toEqual([key, other]);
  });

  test('a bearer token goes in Authorization; an administrator token carries every scope', async () => {
    const administrator = await app.db.administrator.create({
      data: { userName: 'typed-operator', passwordHash: 'x', passwordSalt: 'x' },
    });
    const { token } = signAccessToken(
      { id: administrator.id, kind: 'administrator', scopes: [], version: administrator.tokenVersion },
      app.config.cmsSecret,
      { expiresIn: 600 },
    );
    const client = typed.clientAs({ bearerToken: token });
    const { data, response } = await client.POST('/api/v1/contents', { body: { siteId: 1, channelId: 3 } });
    expect(response.status).toBe(200);
    expect(data?.contents.map((content) => content.id)).toEqual([4, 3]);
    const forged = await typed.clientAs({ bearerToken: `${token}x` }).POST('/api/v1/contents', {
      body: { siteId: 1 },
    });
    expect(forged.response.status).toBe(401);
  });

  test('an API key and a bearer token together are refused, by the types and at run time', () => {
    expect(() =>
      // @ts-expect-error one credential or the other
      createCmsClient({ baseUrl: typed.baseUrl, apiKey: key, bearerToken: 'token' }),
    ).toThrow('createCmsClient takes an apiKey or a bearerToken, not both');
  });
});
