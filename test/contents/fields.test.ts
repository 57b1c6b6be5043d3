import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type supertest from 'supertest';
import type { components, Problem } from '../../client/src/index.ts';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import type { Content } from '../../src/db/models.ts';
import { formASelection, formBSelection, selectFields } from '../../src/domain/contents/fields.ts';
import {
  CONTENT_FORM_A_VALUES,
  CONTENT_FORM_B_VALUES,
  toContentFormA,
  toContentFormB,
} from '../../src/domain/contents/forms.ts';
import { listContentRecords, TEXT_PIECE_CHARACTERS } from '../../src/domain/contents/list.ts';
import { contractSchema } from '../../src/domain/contractSchemas.ts';
import { JsonText } from '../../src/domain/jsonText.ts';
import { getStlContent, listStlContents } from '../../src/domain/stl/contents.ts';
import { startSecondApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * Field selection (`fields`) on the content list, get content and the template-tag content reads,
 * on the database the run selects: exactly the keys asked for, with the values of the whole
 * record, in the form's order; 400s; the default answer unchanged; the ETag of a selection; and
 * only the selected columns read.
 */

let app: TestApp;
let key: string;
let typed: TypedClient;
let observed: DbHandle;
let production: supertest.Agent;
const queries: string[] = [];

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents', 'STL']));
  typed = await startClient(app, key);
  observed = await createDb(app.services.config.databaseUrl, { onQuery: (text) => queries.push(text) });
  // Production serialises with the compiled serialisers (src/http/serializers.ts), unvalidated.
  production = (await startSecondApp(app, { config: { nodeEnv: 'production' } })).request;
});
afterAll(async () => {
  await observed.db.$disconnect();
  await typed.close();
  await app.close();
});

type ListContentsRequest = components['schemas']['ListContentsRequest'];
type FieldName = components['schemas']['ContentFieldName'];

const list = (body: ListContentsRequest) => typed.client.POST('/api/v1/contents', { body });
const get = (id: number, channelId: number, fields?: string, headers: Record<string, string> = {}) =>
  typed.client.GET('/api/v1/contents/{siteId}/{channelId}/{id}', {
    params: { path: { siteId: 1, channelId, id }, query: fields === undefined ? {} : { fields } },
    headers,
  });
const stlList = (query: Record<string, string>) =>
  typed.client.GET('/api/v1/stl/contents', { params: { query: { siteId: 1, scope: 'All', ...query } } });
const stlGet = (contentId: number, fields?: string) =>
  typed.client.GET('/api/v1/stl/content', {
    params: { query: { siteId: 1, contentId, ...(fields === undefined ? {} : { fields }) } },
  });

/** The record cut to these keys, in its own order. */
function pick(record: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([field]) => keys.includes(field)));
}

function expectProblem(error: Problem | undefined, pointer: string, words: RegExp) {
  expect(error?.type).toBe('https://cms.example/problems/validation');
  const errors = (error as { errors?: { path: string; message: string }[] } | undefined)?.errors ?? [];
  expect(errors).toEqual([expect.objectContaining({ path: pointer, message: expect.stringMatching(words) })]);
}

/** Whether a statement names this column (quoted as either database's statements quote it). */
const names = (text: string, column: string) => new RegExp(`[\`"]${column}[\`"]`).test(text);

const FOUR: FieldName[] = ['id', 'title', 'channelId', 'addDate'];

describe('the content list', () => {
  test('answers exactly the fields asked for, in the order of Content, with the whole record values', async () => {
    const whole = await list({ siteId: 1, perPage: 100 });
    const selected = await list({ siteId: 1, perPage: 100, fields: FOUR });
    expect(selected.response.status).toBe(200);
    expect(selected.data?.totalCount).toBe(whole.data?.totalCount);
    const contents = selected.data?.contents ?? [];
    expect(contents.length).toBe(whole.data?.contents.length);
    expect(contents.length).toBeGreaterThan(3);
    for (const [index, content] of contents.entries()) {
      expect(Object.keys(content)).toEqual(['id', 'channelId', 'title', 'addDate']);
      expect(content).toEqual(pick(whole.data?.contents[index] as Record<string, unknown>, FOUR));
    }
    expect(contents[0]).toEqual({
      id: 5,
      channelId: expect.any(Number),
      title: expect.any(String),
      addDate: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    });
  });

  test('every field alone, and all of them, answer what the whole record holds', async () => {
    const whole = (await list({ siteId: 1, perPage: 100 })).data?.contents ?? [];
    const names = contractSchema('ContentFieldName').enum as FieldName[];
    for (const name of names) {
      const { data } = await list({ siteId: 1, perPage: 100, fields: [name] });
      expect(data?.contents).toEqual(
        whole.map((record) => ({ [name]: (record as Record<string, unknown>)[name] })),
      );
    }
    const all = await list({ siteId: 1, perPage: 100, fields: [...names].reverse() });
    expect(JSON.stringify(all.data?.contents)).toBe(JSON.stringify(whole));
  });

  test('with filters, order, paging and the total', async () => {
    const request: ListContentsRequest = {
      siteId: 1,
      checked: true,
      wheres: [{ column: 'hits', operator: '>=', value: '10' }],
      orders: [{ column: 'hits', desc: true }],
      page: 2,
      perPage: 1,
    };
    const whole = await list(request);
    const selected = await list({ ...request, fields: ['hits', 'id', 'id'] });
    expect(selected.data?.totalCount).toBe(whole.data?.totalCount);
    expect(selected.data?.totalCount).toBeGreaterThan(2);
    expect(selected.data?.contents).toEqual(
      whole.data?.contents.map((record) => ({ id: record.id, hits: record.hits })),
    );
    expect(selected.data?.contents.length).toBe(1);
  });

  test('without fields the answer is the whole record, as before', async () => {
    const { data } = await list({ siteId: 1, perPage: 1 });
    expect(Object.keys(data?.contents[0] ?? {})).toEqual(contractSchema('ContentFieldName').enum);
  });

  test('an empty list and an unknown name are 400s naming them', async () => {
    const empty = await list({ siteId: 1, fields: [] });
    expect(empty.response.status).toBe(400);
    expectProblem(empty.error, '/body/fields', /fewer than 1|at least 1|NOT have fewer/i);
    const unknown = await app.request
      .post('/api/v1/contents')
      .set('X-SS-API-KEY', key)
      .send({ siteId: 1, fields: ['id', 'views'] });
    expect(unknown.status).toBe(400);
    expectProblem(unknown.body, '/body/fields/1', /allowed values/);
  });

  test('reads only the selected columns (and id, version)', async () => {
    queries.length = 0;
    const page = await listContentRecords(observed, { siteId: 1, perPage: 100, fields: ['title'] }, 1000);
    expect(page.contents.length).toBeGreaterThan(3);
    const rowReads = queries.filter((text) => /WHERE\s+"id"\s+(IN\b|=\s*ANY)/i.test(text));
    expect(rowReads.length).toBe(1);
    const read = rowReads[0] ?? '';
    expect(names(read, 'title')).toBe(true);
    expect(names(read, 'version')).toBe(true);
    for (const column of ['body', 'summary', 'settings', 'hits', 'addDate', 'guid']) {
      expect(names(read, column)).toBe(false);
    }
  });
});

describe('get content', () => {
  test('answers only the fields asked for, with its own ETag and 304', async () => {
    const whole = await get(2, 2);
    const selected = await get(2, 2, 'title,groupNames,id');
    expect(selected.response.status).toBe(200);
    expect(selected.data).toEqual({ id: 2, groupNames: ['featured', 'home'], title: 'Beta program' });
    expect(Object.keys(selected.data ?? {})).toEqual(['id', 'groupNames', 'title']);
    const wholeTag = whole.response.headers.get('etag');
    const tag = selected.response.headers.get('etag');
    expect(wholeTag).toMatch(/^"v\d+"$/);
    // id (the first of Content's fields), groupNames (the 9th) and title (the 22nd).
    expect(tag).toMatch(/^"v\d+-f200101"$/);
    expect(tag).not.toBe(wholeTag);
    // The same selection in another order is the same representation; another selection is not.
    expect((await get(2, 2, 'id,title,groupNames')).response.headers.get('etag')).toBe(tag);
    expect((await get(2, 2, 'id,title')).response.headers.get('etag')).not.toBe(tag);

    const fresh = await get(2, 2, 'id,groupNames,title', { 'If-None-Match': tag ?? '' });
    expect(fresh.response.status).toBe(304);
    // The whole record's tag does not validate a selection, nor a selection's the whole record.
    expect(
      (await get(2, 2, 'id,title,groupNames', { 'If-None-Match': wholeTag ?? '' })).response.status,
    ).toBe(200);
    expect((await get(2, 2, undefined, { 'If-None-Match': tag ?? '' })).response.status).toBe(200);

    // A write moves the version: the selection's old tag no longer matches.
    const update = await typed.client.POST('/api/v1/contents/{siteId}/{channelId}/{id}/actions/update', {
      params: { path: { siteId: 1, channelId: 2, id: 2 } },
      body: { hits: 26 },
    });
    expect(update.response.status).toBe(200);
    const after = await get(2, 2, 'id,groupNames,title', { 'If-None-Match': tag ?? '' });
    expect(after.response.status).toBe(200);
    const afterTag = after.response.headers.get('etag') ?? '';
    expect(afterTag).not.toBe(tag);

    // If-Match takes the whole record's tag only: a selection's is a 412, naming the current one.
    const bySelection = await typed.client.POST('/api/v1/contents/{siteId}/{channelId}/{id}/actions/update', {
      params: { path: { siteId: 1, channelId: 2, id: 2 } },
      headers: { 'If-Match': afterTag },
      body: { hits: 27 },
    });
    expect(bySelection.response.status).toBe(412);
    expect(afterTag.startsWith(bySelection.response.headers.get('etag')?.slice(0, -1) ?? '-')).toBe(true);
  });

  test('every field of the whole record, selected', async () => {
    const whole = (await get(1, 2)).data as Record<string, unknown>;
    const names = contractSchema('ContentFieldName').enum as string[];
    const all = await get(1, 2, names.join(','));
    expect(JSON.stringify(all.data)).toBe(JSON.stringify(whole));
    const some = await get(1, 2, 'lastModifiedDate,content,linkUrl');
    expect(some.data).toEqual(pick(whole, ['content', 'linkUrl', 'lastModifiedDate']));
  });

  test('an unknown name, an empty name and an empty list are 400s; a missing content a 404', async () => {
    const unknown = await get(2, 2, 'id,views');
    expect(unknown.response.status).toBe(400);
    expectProblem(unknown.error, '/query/fields', /'views'.*not a field of Content/);
    const many = await get(2, 2, Array.from({ length: 40 }, (_, index) => `x${index}`).join(','));
    expect(many.response.status).toBe(400);
    const told = (many.error as { errors?: { message: string }[] } | undefined)?.errors ?? [];
    expect(told.map((problem) => /'(x\d+)'/.exec(problem.message)?.[1])).toEqual([
      'x0',
      'x1',
      'x2',
      'x3',
      'x4',
    ]);
    const emptyName = await get(2, 2, 'id,,title');
    expect(emptyName.response.status).toBe(400);
    expectProblem(emptyName.error, '/query/fields', /empty name at position 2/);
    const empty = await app.request.get('/api/v1/contents/1/2/2?fields=').set('X-SS-API-KEY', key);
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual([expect.objectContaining({ path: '/query/fields' })]);
    const missing = await get(999, 2, 'id');
    expect(missing.response.status).toBe(404);
  });
});

describe('template-tag content reads', () => {
  test('stl/contents answers only the fields asked for, in form B order', async () => {
    const whole = await stlList({ order: 'Hits' });
    const selected = await stlList({ order: 'Hits', fields: 'settingsXml,tags,id,isTop' });
    expect(selected.response.status).toBe(200);
    const items = selected.data?.value ?? [];
    expect(items.length).toBe(whole.data?.value.length);
    expect(items.length).toBeGreaterThan(2);
    for (const [index, item] of items.entries()) {
      expect(Object.keys(item)).toEqual(['id', 'tags', 'isTop', 'settingsXml']);
      expect(item).toEqual(
        pick(whole.data?.value[index] as Record<string, unknown>, ['id', 'tags', 'isTop', 'settingsXml']),
      );
    }
    const paged = await stlList({ order: 'Hits', startNum: '2', totalNum: '2', fields: 'id' });
    expect(paged.data?.value).toEqual(whole.data?.value.slice(1, 3).map((item) => ({ id: item.id })));
  });

  test('stl/content answers only the fields asked for', async () => {
    const whole = await stlGet(2);
    const selected = await stlGet(2, 'title,groupNameCollection');
    expect(selected.response.status).toBe(200);
    expect(selected.data).toEqual({ value: { groupNameCollection: 'featured,home', title: 'Beta program' } });
    const names = contractSchema('ContentFormBFieldName').enum as string[];
    expect(JSON.stringify((await stlGet(2, names.join(','))).data)).toBe(JSON.stringify(whole.data));
  });

  test('unknown names and empty lists are 400s', async () => {
    const unknown = await stlList({ fields: 'id,content' });
    expect(unknown.response.status).toBe(400);
    expectProblem(unknown.error, '/query/fields', /'content'.*not a field of ContentFormB/);
    const one = await stlGet(2, 'title,navigationUrl');
    expect(one.response.status).toBe(400);
    expectProblem(one.error, '/query/fields', /'navigationUrl'/);
    const empty = await app.request
      .get('/api/v1/stl/content?siteId=1&contentId=2&fields=')
      .set('X-SS-API-KEY', key);
    expect(empty.status).toBe(400);
  });

  test('read only the selected columns: settingsXml reads its texts only when asked for', async () => {
    queries.length = 0;
    const page = await listStlContents(observed, { siteId: 1, scope: 'All', fields: 'title' }, 1000);
    expect(page).toBeInstanceOf(JsonText);
    const rows = (JSON.parse((page as JsonText<unknown>).bytes.toString('utf8')) as { value: unknown[] })
      .value;
    expect(rows.length).toBeGreaterThan(2);
    // The contents' versions, then the rows of those whose kept text does not stand (all, here).
    const byId = queries.filter((text) => /WHERE\s+"id"\s+(IN\b|=\s*ANY)/i.test(text));
    expect(byId.filter((text) => names(text, 'title'))).toHaveLength(1);
    for (const text of byId)
      for (const column of ['summary', 'settings', 'subTitle', 'body'])
        expect(names(text, column)).toBe(false);

    queries.length = 0;
    await getStlContent(observed, { siteId: 1, contentId: 2, fields: 'settingsXml' });
    const one = queries.find((text) => names(text, 'Content')) ?? '';
    for (const column of ['summary', 'settings', 'subTitle']) expect(names(one, column)).toBe(true);
    for (const column of ['title', 'body', 'hits']) expect(names(one, column)).toBe(false);
  });
});

describe('the field tables make what the whole forms make', () => {
  test('each field of every fixture content, form A and form B', async () => {
    const rows = (await observed.db.content.findMany({ orderBy: { id: 'asc' } })) as Content[];
    expect(rows.length).toBeGreaterThan(3);
    const a = formASelection(Object.keys(CONTENT_FORM_A_VALUES));
    const b = formBSelection(Object.keys(CONTENT_FORM_B_VALUES).join(','));
    if (!a || !b) throw new Error('a selection of every field');
    for (const row of rows) {
      expect(JSON.stringify(selectFields(row, a))).toBe(JSON.stringify(toContentFormA(row)));
      expect(JSON.stringify(selectFields(row, b))).toBe(JSON.stringify(toContentFormB(row)));
    }
  });
});

describe('production (compiled serialisers) answers what the validated path answers', () => {
  test.each([
    [
      'the list',
      (agent: supertest.Agent) => agent.post('/api/v1/contents').send({ siteId: 1, fields: FOUR }),
    ],
    ['the whole list', (agent: supertest.Agent) => agent.post('/api/v1/contents').send({ siteId: 1 })],
    [
      'get content',
      (agent: supertest.Agent) => agent.get('/api/v1/contents/1/2/2?fields=id,tagNames,linkUrl'),
    ],
    [
      'stl/contents',
      (agent: supertest.Agent) => agent.get('/api/v1/stl/contents?siteId=1&scope=All&fields=id,isTop,tags'),
    ],
    [
      'stl/content',
      (agent: supertest.Agent) => agent.get('/api/v1/stl/content?siteId=1&contentId=2&fields=title,hits'),
    ],
  ])('%s', async (_name, call) => {
    const validated = await call(app.request).set('X-SS-API-KEY', key);
    const fast = await call(production).set('X-SS-API-KEY', key);
    expect(validated.status).toBe(200);
    expect(fast.status).toBe(200);
    expect(fast.text).toBe(validated.text);
  });
});

test('a selected long text is read whole, in pieces', async () => {
  const body = `${'é'.repeat(5)}${'b'.repeat(TEXT_PIECE_CHARACTERS * 2 + 7)}`;
  await observed.db.content.update({ where: { id: 4 }, data: { body } });
  const { data } = await list({ siteId: 1, perPage: 100, fields: ['id', 'body'] });
  const four = data?.contents.find((content) => content.id === 4);
  expect(four?.body?.length).toBe(body.length);
  expect(four?.body === body).toBe(true);
  expect(Object.keys(four ?? {})).toEqual(['id', 'body']);
});

describe('selections are kept by how they were asked', () => {
  test('the same ask answers the same selection; a list and a text never stand for each other', () => {
    const listed = formASelection(['title', 'id']);
    expect(listed?.fields).toEqual(['id', 'title']);
    expect(formASelection(['title', 'id'])).toBe(listed);
    // Asked as a text, the same selection made apart: the same fields, columns and key.
    const { answerOf: _listedMaker, ...listedParts } = listed ?? {};
    const { answerOf: _textMaker, ...textParts } = formASelection('title,id') ?? {};
    expect(textParts).toEqual(listedParts);
    // The list's key, asked as a text, is a name Content lacks: a 400, every time.
    for (let attempt = 0; attempt < 2; attempt++)
      expect(() => formASelection('["title","id"]')).toThrow(
        /names '\["title"', which is not a field of Content/,
      );
    // And a text's names, asked as one item of a list, are one name: never the text's selection.
    expect(formASelection('id,title')?.fields).toEqual(['id', 'title']);
    expect(() => formASelection(['id,title'])).toThrow(/names 'id,title', which is not a field of Content/);
    expect(formBSelection('id,title')?.form.record).toBe('ContentFormB');
  });
});
