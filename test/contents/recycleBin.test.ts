import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { CmsClient, components } from '../../client/src/index.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';

let app: TestApp;
let key: string;
let typed: TypedClient;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents']));
  typed = await startClient(app, key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

type Ids = readonly [siteId: number, channelId: number, id: number];
const path = ([siteId, channelId, id]: Ids) => ({ params: { path: { siteId, channelId, id } } });

const get = (ids: Ids) => typed.client.GET('/api/v1/contents/{siteId}/{channelId}/{id}', path(ids));
const remove = (ids: Ids) =>
  typed.client.POST('/api/v1/contents/{siteId}/{channelId}/{id}/actions/delete', path(ids));
const restore = (ids: Ids, client: CmsClient = typed.client) =>
  client.POST('/api/v1/contents/{siteId}/{channelId}/{id}/actions/restore', path(ids));
const bin = (
  siteId: number,
  query: { channelId?: number; page?: number | string; perPage?: number | string } = {},
  client: CmsClient = typed.client,
) => client.GET('/api/v1/contents/{siteId}/recycle', { params: { path: { siteId }, query } });
const total = async (body: components['schemas']['ListContentsRequest']) =>
  (await typed.client.POST('/api/v1/contents', { body })).data?.totalCount;

describe('the recycle bin', () => {
  test('lists deleted contents, most recently deleted first, with a count; by channel; paged', async () => {
    // The fixture's bin holds 8 (channel 2).
    const first = await bin(1);
    expect(first.response.status).toBe(200);
    expect(first.data?.totalCount).toBe(1);
    expect(first.data?.contents.map((content) => content.id)).toEqual([8]);
    expect(first.data?.contents[0]).toMatchObject({ id: 8, channelId: 2, title: 'Recycled news' });

    await remove([1, 3, 4]);
    await remove([1, 4, 6]);
    const all = await bin(1);
    expect(all.data?.totalCount).toBe(3);
    expect(all.data?.contents.map((content) => content.id)).toEqual([6, 4, 8]);
    expect((await bin(1, { channelId: 3 })).data).toMatchObject({ totalCount: 1, contents: [{ id: 4 }] });
    const second = await bin(1, { page: 2, perPage: 1 });
    expect(second.data).toMatchObject({ totalCount: 3, contents: [{ id: 4 }] });
    // Lenient paging, as the account lists: anything but digits is the default.
    expect((await bin(1, { page: 'abc', perPage: '' })).data?.contents.map((c) => c.id)).toEqual([6, 4, 8]);
    // Another site's bin is its own.
    expect((await bin(10)).data).toEqual({ totalCount: 0, contents: [] });
  });

  test('restore: the content is back as it was, in every read and total', async () => {
    const ids = [1, 2, 2] as const;
    const before = (await get(ids)).data;
    const approved = await total({ siteId: 1, checked: true });
    const tagged = await total({ siteId: 1, tagNames: ['beta'] });
    await remove(ids);
    expect((await get(ids)).response.status).toBe(404);
    expect(await total({ siteId: 1, checked: true })).toBe((approved ?? 0) - 1);
    expect(await total({ siteId: 1, tagNames: ['beta'] })).toBe((tagged ?? 0) - 1);

    const { data, response } = await restore(ids);
    expect(response.status).toBe(200);
    const { lastModifiedDate, ...rest } = data as NonNullable<typeof data>;
    const { lastModifiedDate: _before, ...same } = before as NonNullable<typeof before>;
    expect(rest).toEqual(same);
    expect(lastModifiedDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect((await get(ids)).data).toEqual(data);
    expect(await total({ siteId: 1, checked: true })).toBe(approved);
    expect(await total({ siteId: 1, tagNames: ['beta'] })).toBe(tagged);
    const row = await app.db.content.findUniqueOrThrow({ where: { id: 2 } });
    expect({ recycled: row.recycled, recycledDate: row.recycledDate }).toEqual({
      recycled: false,
      recycledDate: null,
    });
    expect((await bin(1)).data?.contents.map((content) => content.id)).not.toContain(2);
  });

  test('restore 404: not in the bin (twice, never deleted), another channel, missing site or channel', async () => {
    expect((await restore([1, 2, 8])).response.status).toBe(200);
    for (const ids of [
      [1, 2, 8],
      [1, 2, 1],
      [1, 3, 999],
      [1, 2, 6],
      [999, 2, 6],
      [1, 999, 6],
      [10, 4, 6],
    ] as const) {
      const { response, error } = await restore(ids);
      expect(response.status).toBe(404);
      expect(error).toMatchObject({ type: 'https://cms.example/problems/not-found' });
    }
    expect((await app.db.content.findUniqueOrThrow({ where: { id: 6 } })).recycled).toBe(true);
    expect((await bin(999)).response.status).toBe(404);
  });

  test('400 for ids that are not integers of at least 1', async () => {
    for (const url of [
      '/api/v1/contents/1/2/0/actions/restore',
      '/api/v1/contents/1/2/abc/actions/restore',
      '/api/v1/contents/0/recycle',
      '/api/v1/contents/1/recycle?channelId=0',
      '/api/v1/contents/1/recycle?channelId=x',
    ]) {
      const request = url.endsWith('restore') ? app.request.post(url) : app.request.get(url);
      const response = await request.set('X-SS-API-KEY', key);
      expect(response.status).toBe(400);
      expect(response.type).toBe('application/problem+json');
    }
  });

  test('401 without credentials, 403 without the Contents scope', async () => {
    const none = typed.clientAs({});
    const other = typed.clientAs({ apiKey: await app.createApiKey(['Channels', 'STL']) });
    expect((await restore([1, 4, 6], none)).response.status).toBe(401);
    expect((await restore([1, 4, 6], other)).response.status).toBe(403);
    expect((await bin(1, {}, none)).response.status).toBe(401);
    expect((await bin(1, {}, other)).response.status).toBe(403);
    expect((await app.db.content.findUniqueOrThrow({ where: { id: 6 } })).recycled).toBe(true);
  });
});
