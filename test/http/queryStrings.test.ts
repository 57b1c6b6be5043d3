import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { contract } from '../../src/contract.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/*
 * Query strings as client libraries write them (docs/api/cors-and-query-strings.md): `+` is a space
 * (application/x-www-form-urlencoded, what URLSearchParams, browsers' forms and Python's requests
 * send), and reserved characters may come percent-encoded or as they are; a valid value is never a
 * 400 for its spelling.
 */

/** Every character URLs reserve, and spaces. */
const RESERVED = "News & Views: a/b? c=d+e [1] @x !$'()*,;#";
const CHANNEL = 'No Such Channel';
/** The same text as an SQL string literal. */
const SQL_TEXT = RESERVED.replaceAll("'", "''");

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  await importDocument(app, {
    sites: [{ id: 1, siteDir: 'main', siteName: 'Main', isRoot: true }],
    channels: [
      { id: 1, siteId: 1, parentId: 0, channelName: 'Main', taxis: 0 },
      { id: 2, siteId: 1, parentId: 1, channelName: RESERVED, indexName: 'reserved', taxis: 1 },
      { id: 3, siteId: 1, parentId: 1, channelName: 'Two words', indexName: 'two', taxis: 2 },
    ],
    contents: [],
  });
  key = await app.createApiKey('all');
});
afterAll(() => app.close());

const get = (path: string, query: string) => app.request.get(`${path}?${query}`).set('X-SS-API-KEY', key);

describe('stlGetChannel by name', () => {
  test("`+` is a space: the issue's request is a 404 for the channel, not a 400", async () => {
    const response = await get('/api/v1/stl/channel', 'siteId=1&channelName=No+Such+Channel');
    expect(response.status).toBe(404);
    expect(response.body.detail).toContain(CHANNEL);
    expect(response.body.detail).not.toContain('+');
  });

  test.each([
    ['URLSearchParams', new URLSearchParams({ siteId: '1', channelName: RESERVED }).toString()],
    ['encodeURIComponent', `siteId=1&channelName=${encodeURIComponent(RESERVED)}`],
    // Only what would end the value (`&`, `#`, `+`, `=` is fine) or the URL is encoded; the rest raw.
    [
      'reserved characters as they are',
      `siteId=1&channelName=${RESERVED.replaceAll('&', '%26').replaceAll('#', '%23').replaceAll('+', '%2B').replaceAll(' ', '%20')}`,
    ],
  ])('a name full of reserved characters, written by %s, finds its channel', async (_client, query) => {
    const response = await get('/api/v1/stl/channel', query);
    expect(response.status).toBe(200);
    expect(response.body.value).toMatchObject({ id: 2, channelName: RESERVED });
  });

  test('a space written as + or as %20 finds the same channel', async () => {
    for (const query of ['siteId=1&channelName=Two+words', 'siteId=1&channelName=Two%20words']) {
      const response = await get('/api/v1/stl/channel', query);
      expect(response.status).toBe(200);
      expect(response.body.value.id).toBe(3);
    }
  });

  test('%2B is a plus sign, not a space', async () => {
    const response = await get('/api/v1/stl/channel', 'siteId=1&channelName=Two%2Bwords');
    expect(response.status).toBe(404);
    expect(response.body.detail).toContain('Two+words');
  });
});

type Schema = { type?: string | string[]; enum?: unknown[]; pattern?: string };
type Parameter = { name: string; in: string; required?: boolean; schema?: Schema };
const document = contract.resolved as {
  paths: Record<string, Record<string, { operationId: string; parameters?: Parameter[] }>>;
};

/** A valid value of the parameter, with reserved characters and spaces wherever a string may hold them. */
function validValue(operationId: string, parameter: Parameter): string {
  const schema = parameter.schema ?? {};
  if (schema.enum !== undefined) return String(schema.enum[0]);
  const types = [schema.type ?? 'string'].flat();
  if (types.includes('integer')) return parameter.name === 'siteId' ? '1' : '2';
  if (types.includes('boolean')) return 'true';
  if (schema.pattern !== undefined) return '1d';
  if (operationId === 'listActivity' && parameter.name === 'type') return 'content.*';
  if (operationId === 'listActivity' && (parameter.name === 'since' || parameter.name === 'until'))
    return '2026-01-02 03:04:05';
  // A selection of the record's fields (both forms have these two), the comma percent-encoded.
  if (parameter.name === 'fields') return 'id,title';
  if (operationId === 'stlSqlContents' || operationId === 'stlSqlContent')
    return `SELECT id, channelName FROM siteserver_Channel WHERE channelName = '${SQL_TEXT}'`;
  return RESERVED;
}

/** Every GET operation's query parameters, each sent with the operation's required ones. */
const cases = Object.entries(document.paths).flatMap(([path, item]) => {
  const operation = item.get;
  if (operation === undefined) return [];
  const query = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query');
  return query.map((parameter) => {
    const values = new URLSearchParams();
    for (const other of query)
      if (other.required && other !== parameter)
        values.set(other.name, validValue(operation.operationId, other));
    values.set(parameter.name, validValue(operation.operationId, parameter));
    // Path parameters get valid values too: the site's id, or 2 for any other id.
    const concrete = path.replaceAll('{siteId}', '1').replace(/\{[^}]+\}/g, '2');
    return [operation.operationId, parameter.name, concrete, values] as const;
  });
});

describe('every GET operation, every query parameter, through URLSearchParams', () => {
  test('the contract has the string parameters this covers', () => {
    const names = cases.map(([operationId, name]) => `${operationId}.${name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'stlGetChannel.channelName',
        'stlListContents.tags',
        'stlSqlContents.queryString',
      ]),
    );
  });

  test.each(cases)('%s %s: a valid value is not a 400', async (_operationId, name, path, values) => {
    const response = await get(path, values.toString());
    if (name === 'where') {
      // Refused whatever its value (the contract says so): for itself, never for its spelling.
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).not.toMatch(/url encoded|reserved/i);
      return;
    }
    expect([200, 404]).toContain(response.status === 400 ? JSON.stringify(response.body) : response.status);
  });
});
