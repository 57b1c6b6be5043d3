import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { CmsClient, components } from '../../client/src/index.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { SITE_LEVEL, startFixtureApp } from '../support/fixtures.ts';
import { accessTokenOf, expectRefusedBodies } from '../support/requests.ts';

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

type CreateContentRequest = components['schemas']['CreateContentRequest'];

const create = (
  siteId: number,
  channelId: number,
  body: CreateContentRequest,
  client: CmsClient = typed.client,
) => client.POST('/api/v1/contents/{siteId}/{channelId}', { params: { path: { siteId, channelId } }, body });
const list = (body: components['schemas']['ListContentsRequest']) =>
  typed.client.POST('/api/v1/contents', { body });
const row = (id: number) => app.db.content.findUniqueOrThrow({ where: { id } });

describe('POST /api/v1/contents/{siteId}/{channelId}', () => {
  test('adds the content and answers it as form A with its address', async () => {
    const { data, response } = await create(1, 3, {
      title: 'Fresh news',
      content: '<p>fresh</p>',
      summary: 'short',
      groupNames: 'home, featured',
      tagNames: ['fresh', 'tech'],
      linkUrl: '/elsewhere',
      hits: 3,
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      siteId: 1,
      channelId: 3,
      title: 'Fresh news',
      body: '<p>fresh</p>',
      content: '<p>fresh</p>',
      summary: 'short',
      groupNames: ['home', 'featured'],
      tagNames: ['fresh', 'tech'],
      linkUrl: '/elsewhere',
      hits: 3,
      adminId: 0,
      checked: false,
      checkedLevel: 0,
      top: false,
    });
    expect(data?.guid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const id = data?.id as number;
    expect(id).toBeGreaterThan(20);
    expect(response.headers.get('location')).toBe(`/api/v1/contents/1/3/${id}`);
    // What get answers is what create answered.
    const again = await typed.client.GET('/api/v1/contents/{siteId}/{channelId}/{id}', {
      params: { path: { siteId: 1, channelId: 3, id } },
    });
    expect(again.data).toEqual(data);
    const stored = await row(id);
    expect(stored.recycled).toBe(false);
    expect(stored.createdDate.getTime()).toBe(stored.lastModifiedDate.getTime());
    expect(Math.abs(stored.addDate.getTime() - Date.now())).toBeLessThan(60_000);
  });

  test("taxis: the top of the channel by the original's rule, recycled contents aside", async () => {
    // Channel 2 holds 1 (top, taxis 1), 2 (taxis 2) and the recycled 8 (taxis 9).
    const first = await create(1, 2, { title: 'Above the others', taxis: 500 });
    expect(first.data?.taxis).toBe(3);
    const second = await create(1, 2, { title: 'Above that one' });
    expect(second.data?.taxis).toBe(4);
    const top = await create(1, 2, { title: 'Pinned', top: true });
    expect(top.data).toMatchObject({ top: true, taxis: 2_000_000_001 });
    const nextTop = await create(1, 2, { title: 'Pinned later', top: true });
    expect(nextTop.data?.taxis).toBe(2_000_000_002);
    // A top content does not move the others' sequence.
    expect((await create(1, 2, { title: 'Plain again' })).data?.taxis).toBe(5);
    // The default list order puts the newest of each kind first in its channel.
    const page = await list({ siteId: 1, channelId: 2, perPage: 3 });
    expect(page.data?.contents.map((content) => content.title)).toEqual([
      'Pinned later',
      'Pinned',
      'Alpha release notes',
    ]);
  });

  test('review state follows the site level; pending by default', async () => {
    const approved = await create(1, 4, { title: 'Approved', isChecked: 'true' });
    expect(approved.data).toMatchObject({ checked: true, checkedLevel: SITE_LEVEL });
    const stage = await create(1, 4, { title: 'First stage', checkedLevel: 1 });
    expect(stage.data).toMatchObject({ checked: false, checkedLevel: 1 });
    const aliased = await create(1, 4, { title: 'Alias', checked: true });
    expect(aliased.data).toMatchObject({ checked: true, checkedLevel: SITE_LEVEL });
    const draft = await create(1, 4, { title: 'Draft', checkedLevel: -99 });
    expect(draft.data).toMatchObject({ checked: false, checkedLevel: -99 });
  });

  test('the list totals, label filters and stored counts include the new content at once', async () => {
    const filters = [
      { siteId: 1, checked: true },
      { siteId: 1, channelId: 1 },
      { siteId: 1, tagNames: ['counted'] },
      { siteId: 1, hot: true, wheres: [{ column: 'title', operator: 'Like', value: '%count%' }] },
    ] satisfies components['schemas']['ListContentsRequest'][];
    const before = await Promise.all(filters.map(async (filter) => (await list(filter)).data?.totalCount));
    const { data } = await create(1, 3, {
      title: 'Counted',
      tagNames: ['counted'],
      hot: true,
      isChecked: 'true',
    });
    const after = await Promise.all(filters.map(async (filter) => (await list(filter)).data?.totalCount));
    expect(after).toEqual(before.map((total) => (total ?? 0) + 1));
    const tagged = await list({ siteId: 1, tagNames: ['counted'] });
    expect(tagged.data?.contents.map((content) => content.id)).toEqual([data?.id]);
  });

  test("an administrator's token: adminId and addUserName are the administrator's", async () => {
    const admin = await app.db.administrator.create({
      data: { userName: 'chief', passwordHash: 'x', passwordSalt: 'x' },
    });
    const token = accessTokenOf(app, 'administrator', admin.id, ['Contents']);
    const { data, response } = await create(
      1,
      3,
      { title: 'By the chief' },
      typed.clientAs({ bearerToken: token }),
    );
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ adminId: admin.id, lastEditAdminId: admin.id });
    expect((await row(data?.id as number)).addUserName).toBe('chief');
    // A name sent in the body is kept.
    const named = await create(
      1,
      3,
      { title: 'Ghost-written', addUserName: 'ghost' },
      typed.clientAs({ bearerToken: token }),
    );
    expect((await row(named.data?.id as number)).addUserName).toBe('ghost');
  });

  test('400: no title, a blank one, an unknown field, a bad link, contradicting review fields', async () => {
    const cases: [unknown, string][] = [
      [{ body: '<p>no title</p>' }, '/body/title'],
      [{ title: '   ' }, '/body/title'],
      [{ title: 'x', colour: true }, '/body/colour'],
      [{ title: 'x', linkUrl: 'javascript:alert(1)' }, '/body/linkUrl'],
      [{ title: 'x', isChecked: 'true', checkedLevel: 0 }, '/body/isChecked'],
      [{ title: 'x', checkedLevel: 7 }, '/body/checkedLevel'],
      [{ title: 'x', body: 'a', content: 'b' }, '/body/content'],
    ];
    const count = await app.db.content.count();
    await expectRefusedBodies(app, key, '/api/v1/contents/1/3', cases);
    const notJson = await app.request
      .post('/api/v1/contents/1/3')
      .set('X-SS-API-KEY', key)
      .type('application/json')
      .send('{"title":');
    expect(notJson.status).toBe(400);
    expect(await app.db.content.count()).toBe(count);
  });

  test('401 without credentials, 403 without the Contents scope', async () => {
    expect((await create(1, 3, { title: 'x' }, typed.clientAs({}))).response.status).toBe(401);
    const other = typed.clientAs({ apiKey: await app.createApiKey(['Channels', 'STL']) });
    const { response, error } = await create(1, 3, { title: 'x' }, other);
    expect(response.status).toBe(403);
    expect(error).toMatchObject({ status: 403 });
  });

  test('404: a missing site or channel, a channel of another site', async () => {
    for (const [siteId, channelId] of [
      [999, 3],
      [1, 999],
      [1, 11],
      [10, 3],
    ] as const) {
      const { response, error } = await create(siteId, channelId, { title: 'Nowhere' });
      expect(response.status).toBe(404);
      expect(error).toMatchObject({ type: 'https://cms.example/problems/not-found' });
    }
    expect(await app.db.content.count({ where: { title: 'Nowhere' } })).toBe(0);
  });
});
