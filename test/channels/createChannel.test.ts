import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { CmsClient, components } from '../../client/src/index.ts';
import { computeChannelTree, formatParentsPath } from '../../src/domain/channels/tree.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { expectRefusedBodies } from '../support/requests.ts';

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

type CreateChannelRequest = components['schemas']['CreateChannelRequest'];

const create = (siteId: number, body: CreateChannelRequest, client: CmsClient = typed.client) =>
  client.POST('/api/v1/channels/{siteId}', { params: { path: { siteId } }, body });

/** Every stored tree field of the site equals what the whole tree gives. */
async function expectTreeExact(siteId: number) {
  const rows = await app.db.channel.findMany({ where: { siteId } });
  const tree = computeChannelTree(rows);
  for (const row of rows) {
    const fields = tree.get(row.id);
    expect({
      id: row.id,
      path: row.parentsPath,
      count: row.parentsCount,
      children: row.childrenCount,
    }).toEqual({
      id: row.id,
      path: formatParentsPath(fields?.parentsPath ?? []),
      count: fields?.parentsCount,
      children: fields?.childrenCount,
    });
  }
}

describe('POST /api/v1/channels/{siteId}', () => {
  test('adds the channel at the end of its parent, with exact tree fields, and answers form A', async () => {
    const { data, response } = await create(1, {
      parentId: 2,
      channelName: ' Events ',
      channelIndex: 'news-events',
      groupNames: 'a,b',
      description: 'What happens',
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      siteId: 1,
      parentId: 2,
      channelName: 'Events',
      indexName: 'news-events',
      groupNames: ['a', 'b'],
      description: 'What happens',
      parentsPath: [1, 2],
      parentsCount: 2,
      childrenCount: 0,
      taxis: 2,
      children: [],
    });
    const id = data?.id as number;
    expect(response.headers.get('location')).toBe(`/api/v1/channels/1/${id}`);
    const parent = await typed.client.GET('/api/v1/channels/{siteId}/{channelId}', {
      params: { path: { siteId: 1, channelId: 2 } },
    });
    expect(parent.data?.childrenCount).toBe(2);
    expect(parent.data?.children.map((child) => child.id)).toEqual([3, id]);
    await expectTreeExact(1);

    // Under the root, after its last child; then a grandchild of the new channel.
    const top = await create(1, { parentId: 1, channelName: 'About' });
    expect(top.data).toMatchObject({ parentsPath: [1], parentsCount: 1, taxis: 3 });
    const nested = await create(1, { parentId: id, channelName: 'Concerts' });
    expect(nested.data).toMatchObject({ parentsPath: [1, 2, id], parentsCount: 3, taxis: 1 });
    await expectTreeExact(1);
    const list = await typed.client.GET('/api/v1/channels/{siteId}', { params: { path: { siteId: 1 } } });
    expect(list.data?.value.map((channel) => channel.id)).toEqual([
      1,
      4,
      2,
      3,
      id,
      nested.data?.id,
      top.data?.id,
    ]);
  });

  test('409 for an index name the site already uses, under either name; nothing is created', async () => {
    const before = await app.db.channel.count();
    await expectRefusedBodies(
      app,
      key,
      '/api/v1/channels/1',
      [
        [{ parentId: 1, channelName: 'x', indexName: 'news-tech' }, '/body/indexName'],
        [{ parentId: 1, channelName: 'x', channelIndex: 'products' }, '/body/indexName'],
      ],
      409,
    );
    const response = await app.request
      .post('/api/v1/channels/1')
      .set('X-SS-API-KEY', key)
      .send({ parentId: 1, channelName: 'x', indexName: 'news-tech' });
    expect(response.body).toMatchObject({ type: 'https://cms.example/problems/conflict', title: 'Conflict' });
    expect(await app.db.channel.count()).toBe(before);
  });

  test('400: no parent of the site, the update rules, missing fields', async () => {
    const before = await app.db.channel.count();
    const cases: [unknown, string][] = [
      [{ parentId: 999, channelName: 'x' }, '/body/parentId'],
      [{ parentId: 11, channelName: 'x' }, '/body/parentId'],
      [{ parentId: 1, channelName: '   ' }, '/body/channelName'],
      [{ parentId: 1 }, '/body/channelName'],
      [{ channelName: 'x' }, '/body/parentId'],
      [{ parentId: 1, channelName: 'x', filePath: '../outside' }, '/body/filePath'],
      [{ parentId: 1, channelName: 'x', linkUrl: 'javascript:alert(1)' }, '/body/linkUrl'],
      [{ parentId: 1, channelName: 'x', colour: 'red' }, '/body/colour'],
    ];
    await expectRefusedBodies(app, key, '/api/v1/channels/1', cases);
    // The same index name in another site is free.
    const elsewhere = await create(10, { parentId: 10, channelName: 'Tech', indexName: 'news-tech' });
    expect(elsewhere.response.status).toBe(200);
    expect(await app.db.channel.count()).toBe(before + 1);
    await expectTreeExact(1);
    await expectTreeExact(10);
  });

  test('401 without credentials, 403 without the Channels scope, 404 for a missing site', async () => {
    expect((await create(1, { parentId: 1, channelName: 'x' }, typed.clientAs({}))).response.status).toBe(
      401,
    );
    const other = typed.clientAs({ apiKey: await app.createApiKey(['Contents']) });
    expect((await create(1, { parentId: 1, channelName: 'x' }, other)).response.status).toBe(403);
    const { response, error } = await create(999, { parentId: 1, channelName: 'x' });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ type: 'https://cms.example/problems/not-found' });
  });
});
