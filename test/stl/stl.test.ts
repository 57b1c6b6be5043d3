import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { operations, Problem } from '../../client/src/index.ts';
import { contract } from '../../src/contract.ts';
import { sinceInstant } from '../../src/domain/stl/contents.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { loadStlFixture } from './fixture.ts';

/* The template-tag reads over HTTP, on the database the run selects (SQLite or PostgreSQL). */

let app: TestApp;
let key: string;
let typed: TypedClient;
const now = new Date();

beforeAll(async () => {
  app = await startTestApp();
  await loadStlFixture(app, now);
  key = await app.createApiKey(['STL']);
  typed = await startClient(app, key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

type Query<K extends keyof operations> = NonNullable<operations[K]['parameters']['query']>;

/** A typed call's status, its data on success and its problem otherwise. */
async function outcome<T>(call: Promise<{ data?: T; error?: Problem; response: Response }>) {
  const { data, error, response } = await call;
  return { status: response.status, contentType: response.headers.get('content-type'), data, problem: error };
}
const sites = (query: Query<'stlListSites'> = {}) =>
  outcome(typed.client.GET('/api/v1/stl/sites', { params: { query } }));
const site = (query: Query<'stlGetSite'> = {}) =>
  outcome(typed.client.GET('/api/v1/stl/site', { params: { query } }));
const channel = (query: Query<'stlGetChannel'> = {}) =>
  outcome(typed.client.GET('/api/v1/stl/channel', { params: { query } }));
const contents = (query: Query<'stlListContents'> = {}) =>
  outcome(typed.client.GET('/api/v1/stl/contents', { params: { query } }));
const content = (query: Query<'stlGetContent'>) =>
  outcome(typed.client.GET('/api/v1/stl/content', { params: { query } }));
/** For queries the contract's types forbid on purpose. */
const untyped = (path: string, query: Record<string, string | number>) =>
  app.request.get(`/api/v1/stl/${path}`).query(query).set('X-SS-API-KEY', key);
const ids = (result: { data?: { value: { id?: number }[] } | undefined }) =>
  (result.data?.value ?? []).map((item) => item.id);

describe('stl/sites and stl/site', () => {
  test('every site, by taxis then id, root included; siteId and siteDir do not filter', async () => {
    const response = await sites({ siteId: 2, siteDir: 'main' });
    expect(response.status).toBe(200);
    expect(ids(response)).toEqual([3, 1, 2]);
    expect(response.data?.value[1]).toMatchObject({
      id: 1,
      siteDir: 'main',
      siteName: 'Main site',
      tableName: 'siteserver_Content',
      isRoot: true,
      parentId: 0,
      taxis: 0,
    });
  });

  test('attributes: every field, each in the type docs/api/site-attributes.md gives it', async () => {
    const attributes = (await site({ siteId: 1 })).data?.value.attributes ?? {};
    const { components } = contract.document as {
      components: { schemas: { SiteAttributes: { required: string[] } } };
    };
    const schema = components.schemas.SiteAttributes;
    expect(Object.keys(attributes).sort()).toEqual([...schema.required].sort());
    expect(attributes).toMatchObject({
      charset: 'utf-8',
      configUploadImageIsTitleImage: 'False',
      configUploadImageTitleImageWidth: '640',
      configUploadImageTitleImageHeight: '',
      pageSize: 12,
      checkContentLevel: 1,
      isWaterMark: true,
      isCountHits: false,
      createStaticContentAddDate: '2024-05-01 10:00:00',
      imageUploadTypeCollection: 'jpg|png',
      fileUploadTypeCollection: 'zip,pdf',
    });
  });

  test.each([
    [{}, 1],
    [{ siteId: 2 }, 2],
    [{ siteDir: 'archive' }, 3],
    [{ siteDir: 'en/news' }, 2],
    [{ siteDir: '/EN\\News/' }, 2],
    [{ siteId: 3, siteDir: 'main' }, 3],
  ])('site choice %j → site %d', async (query, id) => {
    const response = await site(query);
    expect(response.status).toBe(200);
    expect(response.data?.value.id).toBe(id);
  });

  test.each([
    [{ siteId: 99 }, 'Site 99 does not exist'],
    [{ siteDir: 'nowhere' }, "No site has the directory 'nowhere'"],
  ])('an unknown site %j is a 404', async (query, detail) => {
    const response = await site(query);
    expect(response.status).toBe(404);
    expect(response.contentType).toMatch(/^application\/problem\+json/);
    expect(response.problem).toMatchObject({ type: 'https://cms.example/problems/not-found', detail });
  });

  test('without a root site the first site by taxis is chosen; without any site, 404', async () => {
    const other = await startTestApp();
    try {
      const otherKey = await other.createApiKey(['STL']);
      const otherTyped = await startClient(other, otherKey);
      const site = () => outcome(otherTyped.client.GET('/api/v1/stl/site'));
      expect((await site()).status).toBe(404);
      expect((await site()).problem?.detail).toBe('No site exists');
      await other.db.site.createMany({
        data: [
          { id: 5, siteDir: 'b', siteName: 'B', taxis: 2 },
          { id: 6, siteDir: 'a', siteName: 'A', taxis: 1 },
        ],
      });
      expect((await site()).data?.value.id).toBe(6);
      await otherTyped.close();
    } finally {
      await other.close();
    }
  });
});

describe('stl/channel', () => {
  test('form B, with the settings twice (additional and attributes)', async () => {
    const response = await channel({ channelId: 14 });
    expect(response.status).toBe(200);
    const settings = {
      isChannelAddable: false,
      isContentAddable: true,
      isChannelCreatable: true,
      isContentCreatable: true,
      isCreateChannelIfContentChanged: true,
      createChannelIDsIfContentChanged: '1,14',
      contentAttributesOfDisplay: 'Title,Hits',
      transChannelIds: '',
      transChannelNames: '',
      defaultTaxisType: 'OrderByTaxis',
      transType: 2,
      transSiteId: 0,
      transDoneType: 0,
      transIsAutomatic: true,
      isPreviewContents: false,
    };
    expect(response.data?.value).toEqual(
      expect.objectContaining({
        id: 14,
        channelName: 'Products',
        siteId: 1,
        parentId: 1,
        parentsPath: '1',
        parentsCount: 1,
        childrenCount: 0,
        isLastNode: false,
        indexName: 'products',
        groupNameCollection: '',
        taxis: 2,
        contentNum: 1,
        additional: settings,
        attributes: settings,
      }),
    );
  });

  test('tree fields, group names and the count of approved contents outside the recycle bin', async () => {
    const value = (await channel({ channelIndex: 'news' })).data?.value;
    expect(value).toMatchObject({
      id: 11,
      parentsPath: '1',
      childrenCount: 1,
      isLastNode: false,
      groupNameCollection: 'top,nav',
      addDate: '2024-01-15 10:00:00',
      keywords: 'news,press',
      // 101, 102 and 110: 103 is pending and 107 recycled.
      contentNum: 3,
    });
    expect((await channel({ channelId: 13 })).data?.value).toMatchObject({
      parentsPath: '1,11,12',
      parentsCount: 3,
      isLastNode: true,
    });
  });

  test.each([
    [{}, 1],
    [{ channelId: 12 }, 12],
    [{ channelIndex: 'tech' }, 12],
    [{ channelName: 'News' }, 11],
    [{ channelId: 13, channelIndex: 'tech', channelName: 'News' }, 13],
    [{ channelIndex: 'news', channelName: 'Products' }, 11],
    [{ siteDir: 'en/news', channelIndex: 'news' }, 21],
    [{ siteId: 2 }, 2],
  ])('channel choice %j → channel %d', async (query, id) => {
    const response = await channel(query);
    expect(response.status).toBe(200);
    expect(response.data?.value.id).toBe(id);
  });

  test.each([
    [{ channelId: 21 }, 'Channel 21 does not exist in site 1'],
    [{ channelIndex: 'nope' }, "No channel with index 'nope' exists in site 1"],
    [{ channelName: 'Nope' }, "No channel named 'Nope' exists in site 1"],
    [{ siteId: 9, channelId: 11 }, 'Site 9 does not exist'],
    [{ siteId: 3, channelIndex: 'news' }, "No channel with index 'news' exists in site 3"],
  ])('an unknown channel %j is a 404', async (query, detail) => {
    const response = await channel(query);
    expect(response.status).toBe(404);
    expect(response.problem?.detail).toBe(detail);
  });
});

describe('stl/contents', () => {
  test.each<[Query<'stlListContents'>, number[]]>([
    // Default order: top desc, taxis desc, id desc.
    [{ channelId: 11 }, [101, 110, 102]],
    [{ channelId: 11, scope: 'Self' }, [101, 110, 102]],
    [{ channelId: 1, scope: 'Children' }, [106, 101, 110, 102]],
    [{ channelId: 11, scope: 'SelfAndChildren' }, [101, 110, 102, 104]],
    [{ channelId: 11, scope: 'Descendant' }, [105, 104]],
    [{ scope: 'All' }, [106, 101, 110, 102, 108, 105, 104]],
    [{ channelIndex: 'tech', scope: 'All' }, [106, 101, 110, 102, 108, 105, 104]],
    [{ siteId: 2, scope: 'All' }, [109]],
    [{ channelName: 'News', scope: 'Descendant' }, [105, 104]],
    [{}, [108]],
  ])('scope %j', async (query, expected) => {
    const response = await contents(query);
    expect(response.status).toBe(200);
    expect(ids(response)).toEqual(expected);
  });

  test.each<[Query<'stlListContents'>['order'], number[]]>([
    ['Default', [106, 101, 110, 102, 108, 105, 104]],
    ['Back', [106, 101, 108, 105, 104, 102, 110]],
    ['AddDate', [110, 106, 105, 102, 104, 101, 108]],
    ['AddDateBack', [108, 101, 104, 102, 105, 106, 110]],
    ['LastModifiedDate', [110, 104, 101, 106, 105, 102, 108]],
    ['Hits', [106, 102, 104, 101, 105, 108, 110]],
  ])('order %s', async (order, expected) => {
    expect(ids(await contents({ scope: 'All', order }))).toEqual(expected);
  });

  test('order Random: the same contents, each once', async () => {
    const response = await contents({ scope: 'All', order: 'Random' });
    expect(response.status).toBe(200);
    expect(ids(response).sort()).toEqual([101, 102, 104, 105, 106, 108, 110]);
  });

  test.each<[Query<'stlListContents'>, number[]]>([
    [{ startNum: 2, totalNum: 3 }, [101, 110, 102]],
    [{ startNum: 6 }, [105, 104]],
    [{ startNum: 8 }, []],
    [{ totalNum: 1 }, [106]],
    [{ totalNum: 0 }, [106, 101, 110, 102, 108, 105, 104]],
    [{ group: 'a' }, [101, 104]],
    [{ group: 'a, b' }, [101, 102, 104]],
    [{ group: 'A' }, [101, 104]],
    [{ groupNot: 'a' }, [106, 110, 102, 108, 105]],
    [{ group: 'b', groupNot: 'a' }, [102]],
    [{ tags: 'y' }, [102, 104]],
    [{ tags: 'x,nothing' }, [101, 104]],
    [{ isTop: true }, [106, 101]],
    [{ isTop: false }, [110, 102, 108, 105, 104]],
    [{ isRecommend: true }, [102]],
    [{ isHot: true }, [104]],
    [{ isColor: true }, [105]],
    [{ isTop: false, isHot: false, isColor: false }, [110, 102, 108]],
    [{ since: '7d' }, [110]],
    [{ since: '1w' }, [110]],
    [{ since: '2024-04-01' }, [106, 110, 105]],
    [{ since: '100y' }, [106, 101, 110, 102, 108, 105, 104]],
    // The widest the contract allows, answered alike by both databases.
    [{ since: '1000y' }, [106, 101, 110, 102, 108, 105, 104]],
    [{ since: '9999m' }, [106, 101, 110, 102, 108, 105, 104]],
    [{ since: '1000-01-01' }, [106, 101, 110, 102, 108, 105, 104]],
    [{ since: '9999-12-31' }, []],
  ])('tag attributes %j (scope All)', async (query, expected) => {
    const response = await contents({ scope: 'All', ...query });
    expect(response.status).toBe(200);
    expect(ids(response)).toEqual(expected);
  });

  test('form B of a content: flags as booleans, lists comma-joined, the rest in settingsXml', async () => {
    const [first] = (await contents({ channelId: 12 })).data?.value ?? [];
    expect(first).toEqual({
      id: 104,
      channelId: 12,
      siteId: 1,
      addUserName: 'admin',
      lastEditUserName: 'editor',
      writingUserName: '',
      lastEditDate: '2024-07-01 08:00:00',
      addDate: '2024-02-01 08:00:00',
      taxis: 1,
      groupNameCollection: 'a,b',
      tags: 'x,y',
      sourceId: 0,
      referenceId: 0,
      checkedLevel: 1,
      hits: 20,
      isChecked: true,
      isTop: false,
      isRecommend: false,
      isHot: true,
      isColor: false,
      title: 'Content 104',
      linkUrl: 'https://example.org/104',
      settingsXml: 'summary=Sum%20%26%20more&author=Ann',
    });
  });

  test.each([
    [{ where: 'id > 0' }, '/query/where', 'where is not supported: raw SQL conditions are refused'],
    [
      { since: '2024-02-30' },
      '/query/since',
      "since '2024-02-30' is not a period (7d, at most 1000y) or a date from 1000-01-01 (yyyy-MM-dd)",
    ],
    [{ totalNum: 1001 }, '/query/totalNum', 'totalNum must be at most 1000 (0 = all, up to 1000)'],
  ])('%j is a 400 naming the parameter', async (query, location, detail) => {
    const response = await contents(query);
    expect(response.status).toBe(400);
    expect(response.contentType).toMatch(/^application\/problem\+json/);
    expect(response.problem?.detail).toBe(detail);
    expect(response.problem?.errors).toEqual([expect.objectContaining({ path: location })]);
  });

  test.each([
    [{ unknownAttribute: 'x' }, 'unknownAttribute'],
    [{ where: '' }, 'where'],
    [{ scope: 'Everything' }, 'scope'],
    [{ order: 'Title' }, 'order'],
    [{ startNum: 0 }, 'startNum'],
    [{ totalNum: -1 }, 'totalNum'],
    [{ isTop: 'maybe' }, 'isTop'],
    [{ since: '7days' }, 'since'],
    // Past what PostgreSQL's timestamps hold (it answered 500 for 9999y).
    [{ since: '9999y' }, 'since'],
    [{ since: '1001y' }, 'since'],
    [{ since: '0999-12-31' }, 'since'],
    [{ since: '0000-01-01' }, 'since'],
    [{ channelId: 'news' }, 'channelId'],
  ])('the contract refuses %j with a 400 naming %s', async (query, name) => {
    const response = await untyped('contents', query);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.errors)).toContain(name);
  });

  test('an unknown site or channel is a 404', async () => {
    expect((await contents({ siteId: 9 })).status).toBe(404);
    expect((await contents({ channelIndex: 'nope' })).status).toBe(404);
  });
});

test('since names no instant before 1000 AD, whatever the caller (the contract refuses it first)', () => {
  const now = new Date(2026, 5, 1);
  expect(sinceInstant('1000y', now)?.getFullYear()).toBe(1026);
  expect(sinceInstant('1001y', now)).toBeUndefined();
  expect(sinceInstant('9999y', now)).toBeUndefined();
  expect(sinceInstant('0999-12-31', now)).toBeUndefined();
  expect(sinceInstant('1000-01-01', now)?.getFullYear()).toBe(1000);
});

describe('stl/content', () => {
  test.each([
    [{ contentId: 104 }, 104],
    [{ contentId: 104, channelIndex: 'tech' }, 104],
    [{ contentId: 108, channelId: 1 }, 108],
    [{ contentId: 109, siteDir: 'en/news' }, 109],
  ])('%j → content %d in form B', async (query, id) => {
    const response = await content(query);
    expect(response.status).toBe(200);
    expect(response.data?.value).toMatchObject({ id, isChecked: true });
  });

  test.each([
    [{ contentId: 104, channelId: 11 }, 'No approved content 104 in channel 11 of site 1'],
    [{ contentId: 103 }, 'No approved content 103 in site 1'],
    [{ contentId: 107 }, 'No approved content 107 in site 1'],
    [{ contentId: 109 }, 'No approved content 109 in site 1'],
    [{ contentId: 999 }, 'No approved content 999 in site 1'],
    [{ contentId: 104, channelIndex: 'nope' }, "No channel with index 'nope' exists in site 1"],
    [{ contentId: 104, siteId: 9 }, 'Site 9 does not exist'],
  ])('%j is a 404', async (query, detail) => {
    const response = await content(query);
    expect(response.status).toBe(404);
    expect(response.problem).toMatchObject({ status: 404, detail });
  });

  test('contentId is required', async () => {
    const response = await untyped('content', {});
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.errors)).toContain('contentId');
  });
});

describe('access', () => {
  test.each(['sites', 'site', 'channel', 'contents', 'content?contentId=104'])(
    'stl/%s: no credentials 401, a key without the STL scope 403',
    async (path) => {
      expect((await app.request.get(`/api/v1/stl/${path}`)).status).toBe(401);
      const other = await app.createApiKey(['Contents', 'Channels']);
      const response = await app.request.get(`/api/v1/stl/${path}`).set('X-SS-API-KEY', other);
      expect(response.status).toBe(403);
    },
  );
});
