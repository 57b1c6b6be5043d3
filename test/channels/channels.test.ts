import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { CmsClient, components } from '../../client/src/index.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';

let app: TestApp;
let key: string;
let typed: TypedClient;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Channels']));
  typed = await startClient(app, key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

type UpdateChannelRequest = components['schemas']['UpdateChannelRequest'];

const get = (siteId: number, channelId: number, client: CmsClient = typed.client) =>
  client.GET('/api/v1/channels/{siteId}/{channelId}', { params: { path: { siteId, channelId } } });
const update = (
  siteId: number,
  channelId: number,
  body: UpdateChannelRequest | undefined,
  client: CmsClient = typed.client,
) =>
  client.POST('/api/v1/channels/{siteId}/{channelId}/actions/update', {
    params: { path: { siteId, channelId } },
    ...(body === undefined ? {} : { body }),
  });
/** For bodies the contract's types forbid on purpose (unknown fields, wrong types). */
const updateUntyped = (path: string, body: object) =>
  app.request.post(`/api/v1/channels/${path}/actions/update`).set('X-SS-API-KEY', key).send(body);
const row = (id: number) => app.db.channel.findUniqueOrThrow({ where: { id } });

describe('GET /api/v1/channels/{siteId}/{channelId}', () => {
  test('the root channel with its direct children, ordered by taxis then id', async () => {
    const { data, response } = await get(1, 1);
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      id: 1,
      siteId: 1,
      parentId: 0,
      channelName: 'Main site',
      indexName: '',
      parentsPath: [],
      parentsCount: 0,
      childrenCount: 2,
      tableName: 'siteserver_Content',
      navigationUrl: '/channels/1.html',
      isPreviewContentsExists: false,
    });
    expect(data?.children.map((child) => child.id)).toEqual([4, 2]);
    expect(data?.children[0]).toMatchObject({
      id: 4,
      value: 4,
      label: 'Products',
      children: null,
      parentsPath: [1],
      indexName: 'products',
      isPreviewContentsExists: true,
    });
    expect(data?.children[1]).toMatchObject({
      id: 2,
      value: 2,
      label: 'News',
      childrenCount: 1,
      groupNames: ['top-nav'],
    });
  });

  test('a leaf has no children; tree fields are derived', async () => {
    const { data, response } = await get(1, 3);
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      id: 3,
      parentId: 2,
      parentsPath: [1, 2],
      parentsCount: 2,
      childrenCount: 0,
      children: [],
    });
  });

  test('missing channels and channels of another site are 404 problems', async () => {
    for (const [siteId, channelId] of [
      [1, 999],
      [10, 2],
      [1, 11],
      [999, 1],
    ] as const) {
      const { error, response } = await get(siteId, channelId);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(error).toMatchObject({ status: 404, type: 'https://cms.example/problems/not-found' });
    }
  });

  test('401 without a key, 403 without the Channels scope', async () => {
    expect((await get(1, 1, typed.clientAs({}))).response.status).toBe(401);
    const contentsOnly = typed.clientAs({ apiKey: await app.createApiKey(['Contents']) });
    expect((await get(1, 1, contentsOnly)).response.status).toBe(403);
  });
});

describe('POST /api/v1/channels/{siteId}/{channelId}/actions/update', () => {
  test('changes the named fields and answers the channel, form A, unwrapped', async () => {
    const { data, response } = await update(1, 3, {
      channelName: 'Technology',
      channelIndex: 'tech',
      keywords: 'a, b ,c',
      groupNames: ['x', 'y'],
      filePath: '/tech/index.html',
      contentFilePathRule: '/tech/{@ContentID}.html',
      description: 'All about tech',
      channelTemplateId: 3,
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      id: 3,
      channelName: 'Technology',
      indexName: 'tech',
      keywords: 'a,b,c',
      groupNames: ['x', 'y'],
      filePath: '/tech/index.html',
      navigationUrl: '/tech/index.html',
      description: 'All about tech',
      channelTemplateId: 3,
      parentsPath: [1, 2],
      children: [],
    });
    expect(await row(3)).toMatchObject({ channelName: 'Technology', indexName: 'tech', keywords: 'a,b,c' });
  });

  test('the new index name selects contents in the list', async () => {
    const contents = typed.clientAs({ apiKey: await app.createApiKey(['Contents']) });
    const { data, response } = await contents.POST('/api/v1/contents', {
      body: { siteId: 1, index: 'tech' },
    });
    expect(response.status).toBe(200);
    expect(data?.contents.map((c) => c.id)).toEqual([4, 3]);
  });

  test('a request without a body, or with an empty one, changes no field', async () => {
    const before = (await get(1, 2)).data;
    const bare = await update(1, 2, undefined);
    expect(bare.response.status).toBe(200);
    const empty = await update(1, 2, {});
    expect(empty.response.status).toBe(200);
    const { lastModifiedDate: _ignored, ...unchanged } = before ?? {};
    expect(bare.data).toMatchObject(unchanged);
    expect(empty.data).toMatchObject(unchanged);
  });

  test('a channel read with GET can be sent back as it is', async () => {
    const read = (await get(1, 2)).data;
    expect(read?.id).toBe(2);
    const { data, response } = await update(1, 2, read);
    expect(response.status).toBe(200);
    const { lastModifiedDate: _ignored, ...unchanged } = read ?? {};
    expect(data).toMatchObject(unchanged);
  });

  test('rejected updates are 400 problems naming the field, and change nothing', async () => {
    const before = await row(4);
    const cases: [UpdateChannelRequest, string][] = [
      [{ indexName: 'a', channelIndex: 'b' }, 'channelIndex'],
      [{ filePath: '../../etc/passwd' }, 'filePath'],
      [{ channelFilePathRule: 'https://evil.example/x' }, 'channelFilePathRule'],
      [{ contentFilePathRule: 'a\\b' }, 'contentFilePathRule'],
      [{ channelName: '' }, 'channelName'],
      // Longer than both databases can index (PostgreSQL's limit was a 500): the contract's maximum.
      [{ channelName: 'n'.repeat(256) }, 'channelName'],
      [{ indexName: 'i'.repeat(2700) }, 'indexName'],
      // Traversal as a web server would read it: percent-encoded, double-encoded, look-alike dots.
      [{ filePath: '%2e%2e/%2e%2e/etc/passwd' }, 'filePath'],
      [{ filePath: '/a/..%2f..%2fsecret' }, 'filePath'],
      [{ filePath: '/a/%252e%252e/b' }, 'filePath'],
      [{ filePath: '/a%c0%af../b' }, 'filePath'],
      [{ filePath: '/a%00.html' }, 'filePath'],
      [{ filePath: '/\uFF0E\uFF0E/b' }, 'filePath'],
      [{ channelFilePathRule: '/\u2024\u2024/{@channelId}.html' }, 'channelFilePathRule'],
      [{ linkUrl: 'javascript:alert(1)' }, 'linkUrl'],
      [{ linkUrl: 'JaVaScRiPt:alert(1)' }, 'linkUrl'],
      [{ linkUrl: 'java\tscript:alert(1)' }, 'linkUrl'],
      [{ linkUrl: 'data:text/html,<script>alert(1)</script>' }, 'linkUrl'],
      [{ linkUrl: '&#106;avascript:alert(1)' }, 'linkUrl'],
    ];
    // An index name another channel of the site holds: a conflict, 409.
    const clash = await update(1, 4, { indexName: 'news' });
    expect(clash.response.status).toBe(409);
    expect(clash.error).toMatchObject({ type: 'https://cms.example/problems/conflict', title: 'Conflict' });
    expect(clash.error?.errors?.map((problem) => problem.path)).toEqual(['/body/indexName']);
    for (const [body, field] of cases) {
      const { error, response } = await update(1, 4, body);
      expect(response.status).toBe(400);
      expect(error?.errors?.map((problem) => problem.path)).toContain(`/body/${field}`);
    }
    // Bodies the contract's types forbid, sent as they are.
    for (const [body, field] of [
      [{ channelNmae: 'typo' }, 'channelNmae'],
      [{ channelTemplateId: 'x' }, 'channelTemplateId'],
    ] as const) {
      const response = await updateUntyped('1/4', body);
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
    expect(await row(4)).toEqual(before);
  });

  test.each([
    'https://example.org/a?b=c#d',
    'http://example.org',
    '/relative/page.html',
    'page.html#section:2',
    'mailto:news@example.org',
    'tel:+33100000000',
    '',
  ])('the link %j is accepted', async (linkUrl) => {
    const { data, response } = await update(1, 4, { linkUrl });
    expect(response.status).toBe(200);
    expect(data?.linkUrl).toBe(linkUrl);
  });

  test('an index name used in another site is fine', async () => {
    expect((await update(1, 4, { indexName: 'news-x' })).response.status).toBe(200);
    const otherSite = await update(10, 11, { indexName: 'products' });
    expect(otherSite.response.status).toBe(200);
    expect(otherSite.data?.indexName).toBe('products');
  });

  test('missing channels are 404; credentials are checked', async () => {
    expect((await update(1, 999, { channelName: 'x' })).response.status).toBe(404);
    expect((await update(10, 2, { channelName: 'x' })).response.status).toBe(404);
    expect((await update(1, 2, { channelName: 'x' }, typed.clientAs({}))).response.status).toBe(401);
    const contentsOnly = typed.clientAs({ apiKey: await app.createApiKey(['Contents']) });
    expect((await update(1, 2, { channelName: 'x' }, contentsOnly)).response.status).toBe(403);
    expect((await row(2)).channelName).toBe('News');
  });
});
