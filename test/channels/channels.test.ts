import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';

let app: TestApp;
let key: string;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Channels']));
});
afterAll(() => app.close());

const get = (path: string) => app.request.get(`/api/v1/channels/${path}`).set('X-SS-API-KEY', key);
const update = (path: string, body: unknown) =>
  app.request
    .post(`/api/v1/channels/${path}/actions/update`)
    .set('X-SS-API-KEY', key)
    .send(body as object);
const row = (id: number) => app.db.channel.findUniqueOrThrow({ where: { id } });

describe('GET /api/v1/channels/{siteId}/{channelId}', () => {
  test('the root channel with its direct children, ordered by taxis then id', async () => {
    const response = await get('1/1');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
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
    expect(response.body.children.map((child: { id: number }) => child.id)).toEqual([4, 2]);
    expect(response.body.children[0]).toMatchObject({
      id: 4,
      value: 4,
      label: 'Products',
      children: null,
      parentsPath: [1],
      indexName: 'products',
      isPreviewContentsExists: true,
    });
    expect(response.body.children[1]).toMatchObject({
      id: 2,
      value: 2,
      label: 'News',
      childrenCount: 1,
      groupNames: ['top-nav'],
    });
  });

  test('a leaf has no children; tree fields are derived', async () => {
    const response = await get('1/3');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: 3,
      parentId: 2,
      parentsPath: [1, 2],
      parentsCount: 2,
      childrenCount: 0,
      children: [],
    });
  });

  test('missing channels and channels of another site are 404 problems', async () => {
    for (const path of ['1/999', '10/2', '1/11', '999/1']) {
      const response = await get(path);
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  test('401 without a key, 403 without the Channels scope', async () => {
    expect((await app.request.get('/api/v1/channels/1/1')).status).toBe(401);
    const contentsOnly = await app.createApiKey(['Contents']);
    expect((await app.request.get('/api/v1/channels/1/1').set('X-SS-API-KEY', contentsOnly)).status).toBe(
      403,
    );
  });
});

describe('POST /api/v1/channels/{siteId}/{channelId}/actions/update', () => {
  test('changes the named fields and answers the channel, form A, unwrapped', async () => {
    const response = await update('1/3', {
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
    expect(response.body).toMatchObject({
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
    const contentsKey = await app.createApiKey(['Contents']);
    const response = await app.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', contentsKey)
      .send({ siteId: 1, index: 'tech' });
    expect(response.status).toBe(200);
    expect(response.body.contents.map((c: { id: number }) => c.id)).toEqual([4, 3]);
  });

  test('a request without a body, or with an empty one, changes no field', async () => {
    const before = (await get('1/2')).body;
    const bare = await app.request.post('/api/v1/channels/1/2/actions/update').set('X-SS-API-KEY', key);
    expect(bare.status).toBe(200);
    const empty = await update('1/2', {});
    expect(empty.status).toBe(200);
    const { lastModifiedDate: _ignored, ...unchanged } = before;
    expect(bare.body).toMatchObject(unchanged);
    expect(empty.body).toMatchObject(unchanged);
  });

  test('a channel read with GET can be sent back as it is', async () => {
    const read = (await get('1/2')).body;
    const response = await update('1/2', read);
    expect(response.status).toBe(200);
    const { lastModifiedDate: _ignored, ...unchanged } = read;
    expect(response.body).toMatchObject(unchanged);
  });

  test('rejected updates are 400 problems and change nothing', async () => {
    const before = await row(4);
    const cases: [unknown, string][] = [
      [{ indexName: 'news' }, 'indexName'],
      [{ indexName: 'a', channelIndex: 'b' }, 'channelIndex'],
      [{ filePath: '../../etc/passwd' }, 'filePath'],
      [{ channelFilePathRule: 'https://evil.example/x' }, 'channelFilePathRule'],
      [{ contentFilePathRule: 'a\\b' }, 'contentFilePathRule'],
      [{ channelName: '' }, 'channelName'],
      [{ channelNmae: 'typo' }, 'channelNmae'],
      [{ channelTemplateId: 'x' }, 'channelTemplateId'],
    ];
    for (const [body, field] of cases) {
      const response = await update('1/4', body);
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
    expect(await row(4)).toEqual(before);
  });

  test('an index name used in another site is fine', async () => {
    const response = await update('1/4', { indexName: 'news-x' });
    expect(response.status).toBe(200);
    const otherSite = await update('10/11', { indexName: 'products' });
    expect(otherSite.status).toBe(200);
    expect(otherSite.body.indexName).toBe('products');
  });

  test('missing channels are 404; credentials are checked', async () => {
    expect((await update('1/999', { channelName: 'x' })).status).toBe(404);
    expect((await update('10/2', { channelName: 'x' })).status).toBe(404);
    expect(
      (await app.request.post('/api/v1/channels/1/2/actions/update').send({ channelName: 'x' })).status,
    ).toBe(401);
    const contentsOnly = await app.createApiKey(['Contents']);
    const forbidden = await app.request
      .post('/api/v1/channels/1/2/actions/update')
      .set('X-SS-API-KEY', contentsOnly)
      .send({ channelName: 'x' });
    expect(forbidden.status).toBe(403);
    expect((await row(2)).channelName).toBe('News');
  });
});
