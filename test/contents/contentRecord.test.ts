import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { CmsClient, components } from '../../client/src/index.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { SITE_LEVEL, startFixtureApp } from '../support/fixtures.ts';

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

type UpdateContentRequest = components['schemas']['UpdateContentRequest'];
type Ids = readonly [siteId: number, channelId: number, id: number];
const path = ([siteId, channelId, id]: Ids) => ({ params: { path: { siteId, channelId, id } } });

const get = (ids: Ids, client: CmsClient = typed.client) =>
  client.GET('/api/v1/contents/{siteId}/{channelId}/{id}', path(ids));
const update = (ids: Ids, body: UpdateContentRequest | undefined, client: CmsClient = typed.client) =>
  client.POST('/api/v1/contents/{siteId}/{channelId}/{id}/actions/update', {
    ...path(ids),
    ...(body === undefined ? {} : { body }),
  });
const remove = (ids: Ids, client: CmsClient = typed.client) =>
  client.POST('/api/v1/contents/{siteId}/{channelId}/{id}/actions/delete', path(ids));
const row = (id: number) => app.db.content.findUniqueOrThrow({ where: { id } });

describe('GET /api/v1/contents/{siteId}/{channelId}/{id}', () => {
  test('returns form A, unwrapped', async () => {
    const { data, response } = await get([1, 2, 2]);
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      id: 2,
      siteId: 1,
      channelId: 2,
      title: 'Beta program',
      body: '<p>Beta program</p>',
      content: '<p>Beta program</p>',
      summary: 'Summary of Beta program',
      groupNames: ['featured', 'home'],
      tagNames: ['beta'],
      checked: true,
      checkedLevel: 2,
      recommend: true,
      top: false,
      hits: 25,
      linkUrl: null,
      linkType: 'None',
      addDate: '2024-02-01 08:00:00',
    });
    expect(data?.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(data?.lastModifiedDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  test('missing, recycled, or ids that do not belong together are 404 problems', async () => {
    for (const ids of [
      [1, 2, 999],
      [1, 3, 2],
      [10, 2, 2],
      [999, 2, 2],
      [1, 2, 8],
      [10, 11, 2],
    ] as const) {
      const { error, response } = await get(ids);
      expect(response.status).toBe(404);
      expect(error).toMatchObject({ status: 404, type: 'https://cms.example/problems/not-found' });
    }
  });

  test('path parameters that are not 32-bit integers of at least 1 are 400 problems', async () => {
    for (const ids of [
      [1, 2, 0],
      [1, 2, 2147483648],
      [99999999999, 2, 2],
      [1, 2, 1.5],
    ] as const) {
      const { error, response } = await get(ids);
      expect(response.status).toBe(400);
      expect(error?.errors?.[0]?.path).toMatch(/^\/path\//);
    }
    // Not a number at all: the client's types forbid it, so it is sent as it is.
    const text = await app.request.get('/api/v1/contents/1/2/abc').set('X-SS-API-KEY', key);
    expect(text.status).toBe(400);
    expect(text.body.errors[0].path).toBe('/path/id');
  });

  test('401 without a key, 403 without the Contents scope', async () => {
    expect((await get([1, 2, 2], typed.clientAs({}))).response.status).toBe(401);
    const other = typed.clientAs({ apiKey: await app.createApiKey(['Channels', 'STL']) });
    expect((await get([1, 2, 2], other)).response.status).toBe(403);
  });
});

describe('POST .../actions/update', () => {
  test('changes only what it names and returns the updated record', async () => {
    const before = await row(1);
    const { data, response } = await update([1, 2, 1], { title: 'Alpha, revised', body: '<p>new</p>' });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      id: 1,
      title: 'Alpha, revised',
      body: '<p>new</p>',
      content: '<p>new</p>',
      hits: 10,
      top: true,
      author: 'Ann',
    });
    const after = await row(1);
    expect(after.title).toBe('Alpha, revised');
    expect(after.summary).toBe(before.summary);
    expect(after.lastModifiedDate.getTime()).toBeGreaterThanOrEqual(before.lastModifiedDate.getTime());
    expect(after.addDate.getTime()).toBe(before.addDate.getTime());
  });

  test('every kind of field: numbers, flags, dates, lists as text or arrays', async () => {
    const { data, response } = await update([1, 3, 3], {
      taxis: 7,
      hits: 42,
      hitsByDay: 3,
      top: true,
      color: true,
      addDate: '2023-12-24 18:30:00',
      groupNames: ' a, b,a ,',
      tagNames: ['x', 'y', 'x'],
      linkUrl: '/elsewhere',
      addUserName: 'editor',
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      taxis: 7,
      hits: 42,
      top: true,
      color: true,
      addDate: '2023-12-24 18:30:00',
      groupNames: ['a', 'b'],
      tagNames: ['x', 'y'],
      linkUrl: '/elsewhere',
    });
    const stored = await row(3);
    expect(stored).toMatchObject({ hitsByDay: 3, groupNames: 'a,b', tagNames: 'x,y', addUserName: 'editor' });
  });

  test('review state follows the site level (approves at 2)', async () => {
    expect(SITE_LEVEL).toBe(2);
    const review = async (body: UpdateContentRequest) => {
      const { data } = await update([1, 4, 5], body);
      return { checked: data?.checked, checkedLevel: data?.checkedLevel };
    };
    expect(await review({ isChecked: 'false' })).toEqual({ checked: false, checkedLevel: 0 });
    expect(await review({ isChecked: 'TRUE' })).toEqual({ checked: true, checkedLevel: 2 });
    expect(await review({ checkedLevel: 1 })).toEqual({ checked: false, checkedLevel: 1 });
    expect(await review({ checkedLevel: 3 })).toEqual({ checked: true, checkedLevel: 3 });
    expect(await review({ checkedLevel: -2 })).toEqual({ checked: false, checkedLevel: -2 });
    expect(await review({ checked: true })).toEqual({ checked: true, checkedLevel: 2 });
    expect(await review({ isChecked: 'true', checkedLevel: 2 })).toEqual({ checked: true, checkedLevel: 2 });
  });

  test('a request without a body, or with an empty one, changes no field', async () => {
    const before = (await get([1, 2, 2])).data;
    const bare = await update([1, 2, 2], undefined);
    expect(bare.response.status).toBe(200);
    const empty = await update([1, 2, 2], {});
    expect(empty.response.status).toBe(200);
    const { lastModifiedDate: _ignored, ...unchanged } = before ?? {};
    expect(unchanged).toMatchObject({ id: 2, title: 'Beta program' });
    expect(bare.data).toMatchObject(unchanged);
    expect(empty.data).toMatchObject(unchanged);
  });

  test('a record read with GET can be sent back as it is', async () => {
    const read = (await get([1, 2, 2])).data;
    if (!read) throw new Error('content 2 should be readable');
    expect(read.id).toBe(2);
    // Form A and the update share one schema per field (CheckedLevel, …): no cast is needed.
    const { data, response } = await update([1, 2, 2], read);
    expect(response.status).toBe(200);
    const { lastModifiedDate: _ignored, ...unchanged } = read;
    expect(data).toMatchObject(unchanged);
  });

  test('rejected updates are 400 problems naming the field, and change nothing', async () => {
    const before = await row(6);
    const cases: [UpdateContentRequest, string][] = [
      [{ checkedLevel: 7 as UpdateContentRequest['checkedLevel'] }, 'checkedLevel'],
      [{ isChecked: 'true', checkedLevel: 1 }, 'isChecked'],
      [{ isChecked: 'maybe' }, 'isChecked'],
      [{ addDate: 'yesterday' }, 'addDate'],
      [{ hits: -1 }, 'hits'],
      [{ title: '  ' }, 'title'],
      [{ linkUrl: 'javascript:alert(document.cookie)' }, 'linkUrl'],
      [{ linkUrl: 'vbscript:msgbox(1)' }, 'linkUrl'],
      [{ linkUrl: 'data:text/html;base64,PHNjcmlwdD4=' }, 'linkUrl'],
    ];
    for (const [body, field] of cases) {
      const { error, response } = await update([1, 4, 6], body);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(error?.errors?.map((problem) => problem.path)).toContain(`/body/${field}`);
    }
    // Bodies the contract's types forbid, sent as they are.
    for (const [body, field] of [
      [{ titel: 'typo' }, 'titel'],
      [{ title: 'fine', taxis: 'high' }, 'taxis'],
    ] as const) {
      const response = await app.request
        .post('/api/v1/contents/1/4/6/actions/update')
        .set('X-SS-API-KEY', key)
        .send(body);
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
    expect(await row(6)).toEqual(before);
  });

  test('a date that is not on the calendar is a 400 naming the field, in any date field', async () => {
    const before = await row(6);
    const cases: [UpdateContentRequest, string][] = [
      [{ addDate: '2024-02-30 10:00:00' }, 'addDate'],
      [{ addDate: '2023-02-29 10:00:00' }, 'addDate'],
      [{ lastEditDate: '2024-04-31 10:00:00' }, 'lastEditDate'],
      [{ lastHitsDate: '2024-01-01 24:00:00' }, 'lastHitsDate'],
      [{ addDate: '2024-01-01 10:60:00' }, 'addDate'],
      [{ addDate: '2024-01-01 10:00:60' }, 'addDate'],
    ];
    for (const [body, field] of cases) {
      const { error, response } = await update([1, 4, 6], body);
      expect(response.status).toBe(400);
      expect(error?.errors).toEqual([expect.objectContaining({ path: `/body/${field}` })]);
    }
    expect(await row(6)).toEqual(before);
    const leapDay = await update([1, 4, 6], { addDate: '2024-02-29 23:59:59' });
    expect(leapDay.response.status).toBe(200);
    expect(leapDay.data?.addDate).toBe('2024-02-29 23:59:59');
  });

  test('missing or recycled records are 404 problems', async () => {
    for (const ids of [
      [1, 2, 999],
      [1, 3, 2],
      [999, 2, 2],
      [1, 2, 8],
    ] as const) {
      expect((await update(ids, { title: 'x' })).response.status).toBe(404);
    }
    expect((await row(8)).title).toBe('Recycled news');
  });

  test('401 without a key, 403 without the Contents scope', async () => {
    expect((await update([1, 2, 2], { title: 'x' }, typed.clientAs({}))).response.status).toBe(401);
    const other = typed.clientAs({ apiKey: await app.createApiKey(['Channels']) });
    expect((await update([1, 2, 2], { title: 'x' }, other)).response.status).toBe(403);
    expect((await row(2)).title).toBe('Beta program');
  });
});

describe('POST .../actions/delete', () => {
  test('moves the content to the recycle bin and returns form B with the delete-response variants', async () => {
    const { data, response } = await remove([1, 3, 4]);
    expect(response.status).toBe(200);
    expect(data?.value).toMatchObject({
      id: 4,
      channelId: 3,
      siteId: 1,
      title: 'Tech_notes',
      isChecked: 'False',
      isColor: 'True',
      isTop: 'False',
      linkUrl: 'https://example.org/t',
      navigationUrl: 'https://example.org/t',
      content: '<p>Tech_notes</p>',
      summary: 'Summary of Tech_notes',
      author: 'Cy',
      groupNameCollection: '',
      tags: '',
      addDate: '2024-04-01 08:00:00',
      checkedLevel: 0,
    });
    expect(JSON.parse(data?.value.settingsXml ?? '')).toEqual({
      summary: 'Summary of Tech_notes',
      author: 'Cy',
    });
    const stored = await row(4);
    expect(stored.recycled).toBe(true);
    expect(stored.title).toBe('Tech_notes');
  });

  test('the navigation URL follows the file path rules when there is no link', async () => {
    const { data } = await remove([1, 4, 6]);
    expect(data?.value.navigationUrl).toBe('/contents/4/6.html');
    expect(data?.value.isChecked).toBe('False');
  });

  test('afterwards get, update and delete of that id are 404', async () => {
    expect((await get([1, 3, 4])).response.status).toBe(404);
    expect((await update([1, 3, 4], { title: 'back' })).response.status).toBe(404);
    expect((await remove([1, 3, 4])).response.status).toBe(404);
  });

  test('ids that do not belong together are 404 and change nothing', async () => {
    expect((await remove([1, 2, 3])).response.status).toBe(404);
    expect((await remove([10, 11, 3])).response.status).toBe(404);
    expect((await row(3)).recycled).toBe(false);
  });

  test('401 without a key, 403 without the Contents scope', async () => {
    expect((await remove([1, 2, 2], typed.clientAs({}))).response.status).toBe(401);
    const other = typed.clientAs({ apiKey: await app.createApiKey(['STL']) });
    expect((await remove([1, 2, 2], other)).response.status).toBe(403);
    expect((await row(2)).recycled).toBe(false);
  });
});
