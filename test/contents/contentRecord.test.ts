import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { TestApp } from '../support/app.ts';
import { SITE_LEVEL, startFixtureApp } from '../support/fixtures.ts';

let app: TestApp;
let key: string;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents']));
});
afterAll(() => app.close());

const get = (path: string) => app.request.get(`/api/v1/contents/${path}`).set('X-SS-API-KEY', key);
const update = (path: string, body: unknown) =>
  app.request
    .post(`/api/v1/contents/${path}/actions/update`)
    .set('X-SS-API-KEY', key)
    .send(body as object);
const remove = (path: string) =>
  app.request.post(`/api/v1/contents/${path}/actions/delete`).set('X-SS-API-KEY', key);
const row = (id: number) => app.db.content.findUniqueOrThrow({ where: { id } });

describe('GET /api/v1/contents/{siteId}/{channelId}/{id}', () => {
  test('returns form A, unwrapped', async () => {
    const response = await get('1/2/2');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
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
    expect(response.body.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body.lastModifiedDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  test('missing, recycled, or ids that do not belong together are 404 problems', async () => {
    for (const path of ['1/2/999', '1/3/2', '10/2/2', '999/2/2', '1/2/8', '10/11/2']) {
      const response = await get(path);
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ status: 404 });
    }
  });

  test('path parameters that are not 32-bit integers of at least 1 are 400 problems', async () => {
    for (const path of ['1/2/abc', '1/2/0', '1/2/2147483648', '99999999999/2/2', '1/2/1.5']) {
      const response = await get(path);
      expect(response.status).toBe(400);
      expect(response.body.errors[0].path).toMatch(/^\/path\//);
    }
  });

  test('401 without a key, 403 without the Contents scope', async () => {
    expect((await app.request.get('/api/v1/contents/1/2/2')).status).toBe(401);
    const other = await app.createApiKey(['Channels', 'STL']);
    expect((await app.request.get('/api/v1/contents/1/2/2').set('X-SS-API-KEY', other)).status).toBe(403);
  });
});

describe('POST .../actions/update', () => {
  test('changes only what it names and returns the updated record', async () => {
    const before = await row(1);
    const response = await update('1/2/1', { title: 'Alpha, revised', body: '<p>new</p>' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
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
    const response = await update('1/3/3', {
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
    expect(response.body).toMatchObject({
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
    expect((await update('1/4/5', { isChecked: 'false' })).body).toMatchObject({
      checked: false,
      checkedLevel: 0,
    });
    expect((await update('1/4/5', { isChecked: 'TRUE' })).body).toMatchObject({
      checked: true,
      checkedLevel: 2,
    });
    expect((await update('1/4/5', { checkedLevel: 1 })).body).toMatchObject({
      checked: false,
      checkedLevel: 1,
    });
    expect((await update('1/4/5', { checkedLevel: 3 })).body).toMatchObject({
      checked: true,
      checkedLevel: 3,
    });
    expect((await update('1/4/5', { checkedLevel: -2 })).body).toMatchObject({
      checked: false,
      checkedLevel: -2,
    });
    expect((await update('1/4/5', { checked: true })).body).toMatchObject({ checked: true, checkedLevel: 2 });
    expect((await update('1/4/5', { isChecked: 'true', checkedLevel: 2 })).body).toMatchObject({
      checked: true,
      checkedLevel: 2,
    });
  });

  test('a request without a body, or with an empty one, changes no field', async () => {
    const before = (await get('1/2/2')).body;
    const bare = await app.request.post('/api/v1/contents/1/2/2/actions/update').set('X-SS-API-KEY', key);
    expect(bare.status).toBe(200);
    const empty = await update('1/2/2', {});
    expect(empty.status).toBe(200);
    const { lastModifiedDate: _ignored, ...unchanged } = before;
    expect(bare.body).toMatchObject(unchanged);
    expect(empty.body).toMatchObject(unchanged);
  });

  test('a record read with GET can be sent back as it is', async () => {
    const read = (await get('1/2/2')).body;
    const response = await update('1/2/2', read);
    expect(response.status).toBe(200);
    const { lastModifiedDate: _ignored, ...unchanged } = read;
    expect(response.body).toMatchObject(unchanged);
  });

  test('rejected updates are 400 problems and change nothing', async () => {
    const before = await row(6);
    const cases: [unknown, string][] = [
      [{ titel: 'typo' }, 'titel'],
      [{ checkedLevel: 7 }, 'checkedLevel'],
      [{ isChecked: 'true', checkedLevel: 1 }, 'isChecked'],
      [{ isChecked: 'maybe' }, 'isChecked'],
      [{ addDate: '2024-02-30 10:00:00' }, 'addDate'],
      [{ addDate: 'yesterday' }, 'addDate'],
      [{ hits: -1 }, 'hits'],
      [{ title: '  ' }, 'title'],
      [{ title: 'fine', taxis: 'high' }, 'taxis'],
    ];
    for (const [body, field] of cases) {
      const response = await update('1/4/6', body);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify(response.body)).toContain(field);
    }
    expect(await row(6)).toEqual(before);
  });

  test('missing or recycled records are 404 problems', async () => {
    for (const path of ['1/2/999', '1/3/2', '999/2/2', '1/2/8']) {
      expect((await update(path, { title: 'x' })).status).toBe(404);
    }
    expect((await row(8)).title).toBe('Recycled news');
  });

  test('401 without a key, 403 without the Contents scope', async () => {
    expect(
      (await app.request.post('/api/v1/contents/1/2/2/actions/update').send({ title: 'x' })).status,
    ).toBe(401);
    const other = await app.createApiKey(['Channels']);
    const response = await app.request
      .post('/api/v1/contents/1/2/2/actions/update')
      .set('X-SS-API-KEY', other)
      .send({ title: 'x' });
    expect(response.status).toBe(403);
    expect((await row(2)).title).toBe('Beta program');
  });
});

describe('POST .../actions/delete', () => {
  test('moves the content to the recycle bin and returns form B with the delete-response variants', async () => {
    const response = await remove('1/3/4');
    expect(response.status).toBe(200);
    const value = response.body.value;
    expect(value).toMatchObject({
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
    expect(JSON.parse(value.settingsXml)).toEqual({ summary: 'Summary of Tech_notes', author: 'Cy' });
    const stored = await row(4);
    expect(stored.recycled).toBe(true);
    expect(stored.title).toBe('Tech_notes');
  });

  test('the navigation URL follows the file path rules when there is no link', async () => {
    const response = await remove('1/4/6');
    expect(response.body.value.navigationUrl).toBe('/contents/4/6.html');
    expect(response.body.value.isChecked).toBe('False');
  });

  test('afterwards get, update and delete of that id are 404', async () => {
    expect((await get('1/3/4')).status).toBe(404);
    expect((await update('1/3/4', { title: 'back' })).status).toBe(404);
    expect((await remove('1/3/4')).status).toBe(404);
  });

  test('ids that do not belong together are 404 and change nothing', async () => {
    expect((await remove('1/2/3')).status).toBe(404);
    expect((await remove('10/11/3')).status).toBe(404);
    expect((await row(3)).recycled).toBe(false);
  });

  test('401 without a key, 403 without the Contents scope', async () => {
    expect((await app.request.post('/api/v1/contents/1/2/2/actions/delete')).status).toBe(401);
    const other = await app.createApiKey(['STL']);
    expect(
      (await app.request.post('/api/v1/contents/1/2/2/actions/delete').set('X-SS-API-KEY', other)).status,
    ).toBe(403);
    expect((await row(2)).recycled).toBe(false);
  });
});
