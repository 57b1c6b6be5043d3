import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { CmsClient } from '../../client/src/index.ts';
import { computeChannelTree, formatParentsPath } from '../../src/domain/channels/tree.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';

let app: TestApp;
let key: string;
let typed: TypedClient;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Channels', 'Contents']));
  typed = await startClient(app, key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

const remove = (siteId: number, channelId: number, client: CmsClient = typed.client) =>
  client.POST('/api/v1/channels/{siteId}/{channelId}/actions/delete', {
    params: { path: { siteId, channelId } },
  });
const restore = (ids: readonly [number, number, number], toChannelId?: number) =>
  typed.client.POST('/api/v1/contents/{siteId}/{channelId}/{id}/actions/restore', {
    params: { path: { siteId: ids[0], channelId: ids[1], id: ids[2] } },
    ...(toChannelId === undefined ? {} : { body: { toChannelId } }),
  });
const total = async () =>
  (await typed.client.POST('/api/v1/contents', { body: { siteId: 1 } })).data?.totalCount;

describe('POST /api/v1/channels/{siteId}/{channelId}/actions/delete', () => {
  test('deletes the sub-tree, its contents to the recycle bin, the tree fields exact', async () => {
    const contents = await total();
    // News (2) holds 1 and 2 (8 is already in the bin); its child Tech (3) holds 3 and 4.
    const { data, response } = await remove(1, 2);
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: 2, channelName: 'News', childrenCount: 1 });
    expect(data?.children.map((child) => child.id)).toEqual([3]);
    expect(await app.db.channel.count({ where: { id: { in: [2, 3] } } })).toBe(0);
    const root = await app.db.channel.findUniqueOrThrow({ where: { id: 1 } });
    expect(root.childrenCount).toBe(1);
    const rows = await app.db.channel.findMany({ where: { siteId: 1 } });
    const tree = computeChannelTree(rows);
    for (const row of rows) {
      expect([row.parentsPath, row.childrenCount]).toEqual([
        formatParentsPath(tree.get(row.id)?.parentsPath ?? []),
        tree.get(row.id)?.childrenCount,
      ]);
    }
    expect(await total()).toBe((contents ?? 0) - 4);
    const bin = await typed.client.GET('/api/v1/contents/{siteId}/recycle', {
      params: { path: { siteId: 1 } },
    });
    expect(bin.data?.contents.map((content) => content.id).sort()).toEqual([1, 2, 3, 4, 8]);
    const channel = await typed.client.GET('/api/v1/channels/{siteId}/{channelId}', {
      params: { path: { siteId: 1, channelId: 3 } },
    });
    expect(channel.response.status).toBe(404);
  });

  test("restorable: into another channel when the content's own is gone", async () => {
    const orphan = await restore([1, 3, 3]);
    expect(orphan.response.status).toBe(400);
    expect(orphan.error?.errors?.[0]?.path).toBe('/body/toChannelId');
    const nowhere = await restore([1, 3, 3], 999);
    expect(nowhere.response.status).toBe(400);
    expect((await app.db.content.findUniqueOrThrow({ where: { id: 3 } })).recycled).toBe(true);
    const { data, response } = await restore([1, 3, 3], 4);
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: 3, channelId: 4, title: 'Tech deep dive 100%' });
    const read = await typed.client.GET('/api/v1/contents/{siteId}/{channelId}/{id}', {
      params: { path: { siteId: 1, channelId: 4, id: 3 } },
    });
    expect(read.data).toEqual(data);
  });

  test('400 for the root channel, 404 for a missing site or channel, 401, 403', async () => {
    const rootResponse = await remove(1, 1);
    expect(rootResponse.response.status).toBe(400);
    expect(rootResponse.error?.errors?.[0]?.path).toBe('/path/channelId');
    expect(await app.db.channel.count({ where: { id: 1 } })).toBe(1);
    for (const [siteId, channelId] of [
      [1, 999],
      [1, 11],
      [999, 4],
    ] as const) {
      const { response, error } = await remove(siteId, channelId);
      expect(response.status).toBe(404);
      expect(error).toMatchObject({ type: 'https://cms.example/problems/not-found' });
    }
    expect((await remove(1, 4, typed.clientAs({}))).response.status).toBe(401);
    const other = typed.clientAs({ apiKey: await app.createApiKey(['Contents']) });
    expect((await remove(1, 4, other)).response.status).toBe(403);
    expect(await app.db.channel.count({ where: { id: 4 } })).toBe(1);
    const invalid = await app.request.post('/api/v1/channels/1/abc/actions/delete').set('X-SS-API-KEY', key);
    expect(invalid.status).toBe(400);
  });
});
