import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Db, DbHandle } from '../../src/db/client.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { rowCounts } from './rowCounts.ts';

const KEY = 'existing-key-0123456789abcdefghijklmn';

/** Already in the database when the bad files arrive. */
const EXISTING = {
  sites: [
    { id: 1, siteDir: 'main', siteName: 'Main', isRoot: true },
    { id: 2, siteDir: 'other', siteName: 'Other' },
  ],
  channels: [
    { id: 10, siteId: 1, parentId: 1, channelName: 'News', indexName: 'news' },
    { id: 20, siteId: 2, parentId: 2, channelName: 'Elsewhere' },
  ],
  contents: [{ id: 1, channelId: 10, title: 'First' }],
  users: [{ id: 1, userName: 'alice', password: 'Secret123', email: 'alice@example.org', mobile: '100' }],
  administrators: [{ id: 1, userName: 'admin', password: 'Admin123' }],
  apiKeys: [{ id: 1, title: 'Existing', key: KEY, scopes: ['Contents'] }],
};

/** Runs an import that must fail; returns its error lines and checks that nothing was written. */
async function failingImport(
  database: Pick<DbHandle, 'db' | 'provider'>,
  document: unknown,
): Promise<string[]> {
  const { db } = database;
  const before = await rowCounts(db);
  const error = await importDocument(database, document).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(DomainError);
  const domainError = error as DomainError;
  expect(domainError.code).toBe('validation');
  expect(domainError.message).toBe(
    `The import file has ${domainError.fields.length} problem${domainError.fields.length === 1 ? '' : 's'}; nothing was imported`,
  );
  expect(await rowCounts(db)).toEqual(before);
  return domainError.fields.map((detail) => detail.message);
}

describe('importDocument refuses a bad file as a whole', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.handle.db;
    await importDocument(database.handle, EXISTING);
  });
  afterAll(() => database.drop());

  test('the file itself must be an object of known sections, each an array of objects', async () => {
    expect(await failingImport(database.handle, [])).toEqual([
      'the import file must be a JSON object with the keys sites, channels, contents, users, administrators, apiKeys',
    ]);
    expect(await failingImport(database.handle, { site: [], contents: {}, users: [5] })).toEqual([
      'site: unknown key (expected sites, channels, contents, users, administrators, apiKeys)',
      'contents: must be an array of records',
      'users[0]: must be an object',
    ]);
  });

  test('unknown fields, wrong types and missing fields name the record and the field', async () => {
    const errors = await failingImport(database.handle, {
      sites: [{ id: 3, siteDir: 'x', siteName: 'X', attributes: { pageSize: '30', colour: 'red' } }],
      channels: [{ id: 11, siteId: 1, parentId: 1, taxis: 1.5, titleColumnWidth: 'wide' }],
      contents: [
        { id: 2, channelId: 10, title: 'ok' },
        { id: 3, channelId: 10, titel: 'typo', hits: 'many', groupNames: 'a,b', addDate: '2024-13-01' },
        { channelId: 10, checkedLevel: 7, top: 'yes', linkUrl: 5 },
      ],
      users: [{ userName: 'bad name', password: 'letters' }],
      apiKeys: [{ title: 'Short', key: 'too-short', scopes: ['Contents', 'Everything'] }],
    });
    expect(errors).toEqual([
      "sites[0] (id 3): attribute 'pageSize' must be an integer",
      "sites[0] (id 3): unknown attribute 'colour'",
      "channels[0] (id 11): field 'channelName' is required",
      "channels[0] (id 11): field 'taxis' must be an integer",
      "channels[0] (id 11): field 'titleColumnWidth' must be an integer, 0 or more",
      "contents[1] (id 3): field 'groupNames' must be an array of strings",
      "contents[1] (id 3): field 'hits' must be an integer",
      "contents[1] (id 3): field 'addDate' must be a date-time yyyy-MM-dd HH:mm:ss",
      "contents[1] (id 3): unknown field 'titel'",
      "contents[2]: field 'checkedLevel' must be -99 (draft), 0 (pending), 1 to 5 (passed) or -1 to -5 (rejected)",
      "contents[2]: field 'top' must be true or false",
      "contents[2]: field 'linkUrl' must be a string or null",
      "users[0]: field 'userName' must be 1 to 64 characters without spaces, ', :, / or \\",
      "users[0]: field 'password' must be at least 6 characters with a letter and a digit",
      "apiKeys[0]: field 'key' must be at least 32 characters",
      "apiKeys[0]: field 'scopes[1]' must be one of Contents, Channels, STL, Users, Administrators, Others, ApiKeys, Webhooks",
    ]);
  });

  test('a text longer than the contract allows for its field is refused, as the API refuses it', async () => {
    const errors = await failingImport(database.handle, {
      channels: [{ id: 12, siteId: 1, parentId: 1, channelName: 'c'.repeat(256) }],
      contents: [
        { id: 4, channelId: 10, title: 't'.repeat(256), body: 'b'.repeat(5_000_001) },
        { id: 5, channelId: 10, title: '中'.repeat(255), tagNames: ['ok', 'x'.repeat(256)] },
      ],
      users: [{ userName: 'longmail', password: 'Secret123', email: `${'m'.repeat(250)}@example.org` }],
    });
    expect(errors).toEqual([
      "channels[0] (id 12): field 'channelName' must be at most 255 characters",
      "contents[0] (id 4): field 'title' must be at most 255 characters",
      "contents[0] (id 4): field 'body' must be at most 5000000 characters",
      "contents[1] (id 5): field 'tagNames[1]' must be at most 255 characters",
      "users[0]: field 'email' must be at most 255 characters",
    ]);
  });

  test('references must exist, and belong to the same site', async () => {
    const errors = await failingImport(database.handle, {
      channels: [
        { id: 11, siteId: 9, parentId: 9, channelName: 'No site' },
        { id: 12, siteId: 1, parentId: 99, channelName: 'No parent' },
        { id: 13, siteId: 1, parentId: 20, channelName: 'Parent elsewhere' },
        { id: 14, siteId: 1, parentId: 0, channelName: 'Second root' },
        { id: 15, siteId: 1, channelName: 'No parent given' },
        { id: 16, siteId: 1, parentId: 17, channelName: 'Loop a' },
        { id: 17, siteId: 1, parentId: 16, channelName: 'Loop b' },
      ],
      contents: [
        { id: 2, channelId: 99, title: 'No channel' },
        { id: 3, siteId: 1, channelId: 20, title: 'Channel of another site' },
        { id: 4, siteId: 8, channelId: 10, title: 'No site' },
        { id: 5, channelId: 12, title: 'In a broken channel: reported once, on the channel' },
      ],
      administrators: [{ userName: 'ops', password: 'Ops12345', siteId: 7, siteIdCollection: '1,6' }],
    });
    expect(errors).toEqual([
      'channels[0] (id 11): site 9 does not exist',
      'channels[1] (id 12): parent channel 99 does not exist in site 1',
      'channels[2] (id 13): parent channel 20 belongs to site 2, not site 1',
      'channels[3] (id 14): parentId is required: only the root channel of site 1 (id 1) has none',
      'channels[4] (id 15): parentId is required: only the root channel of site 1 (id 1) has none',
      'channels[5] (id 16): its parent chain loops instead of reaching the root channel of site 1',
      'channels[6] (id 17): its parent chain loops instead of reaching the root channel of site 1',
      'contents[0] (id 2): channel 99 does not exist',
      'contents[1] (id 3): channel 20 belongs to site 2, not site 1',
      'contents[2] (id 4): site 8 does not exist',
      'administrators[0]: site 7 does not exist',
      'administrators[0]: site 6 does not exist',
    ]);
  });

  test('ids, names and keys must be unique within the file and against the database', async () => {
    const errors = await failingImport(database.handle, {
      sites: [
        { id: 1, siteDir: 'again', siteName: 'Again' },
        { id: 3, siteDir: 'main', siteName: 'Dir taken', isRoot: true },
        { id: 4, siteDir: 'new', siteName: 'New' },
        { id: 4, siteDir: 'new', siteName: 'New twice' },
        { id: 10, siteDir: 'clash', siteName: 'Root id taken by channel 10' },
      ],
      channels: [
        { id: 10, siteId: 1, parentId: 1, channelName: 'Id taken' },
        { id: 11, siteId: 1, parentId: 1, channelName: 'Index taken', indexName: 'news' },
        { id: 12, siteId: 1, parentId: 1, channelName: 'Index', indexName: 'fresh' },
        { id: 12, siteId: 1, parentId: 1, channelName: 'Id and index twice', indexName: 'fresh' },
        { id: 13, siteId: 2, parentId: 2, channelName: 'Same index, other site', indexName: 'news' },
        { id: 2, siteId: 1, parentId: 1, channelName: 'Id of a site root' },
        { id: 14, guid: 'guid-1', siteId: 1, parentId: 1, channelName: 'Guid' },
        { id: 15, guid: 'guid-1', siteId: 1, parentId: 1, channelName: 'Guid twice' },
      ],
      contents: [
        { id: 1, channelId: 10, title: 'Id taken' },
        { id: 5, channelId: 10, title: 'Once' },
        { id: 5, channelId: 10, title: 'Twice' },
        { id: 6, channelId: 10, title: 'Contradiction', checked: true, checkedLevel: 0 },
      ],
      users: [
        { userName: 'alice', password: 'Secret123' },
        { userName: 'bob', password: 'Secret123', email: 'alice@example.org', mobile: '100' },
        { userName: 'carol', password: 'Secret123', email: 'carol@example.org' },
        { userName: 'carol', password: 'Secret123', email: 'carol@example.org' },
      ],
      administrators: [{ id: 1, userName: 'admin', password: 'Admin123' }],
      apiKeys: [
        { title: 'Same as existing', key: KEY, scopes: ['STL'] },
        { title: 'New', key: `${KEY}-2`, scopes: ['STL'] },
        { title: 'New again', key: `${KEY}-2`, scopes: ['STL'] },
      ],
    });
    expect(errors).toEqual([
      'sites[0] (id 1): id 1 already exists',
      "sites[1] (id 3): siteDir 'main' already exists",
      'sites[1] (id 3): only one site can be the root site, and site 1 already is',
      'sites[3] (id 4): duplicate id 4 (also sites[2])',
      "sites[3] (id 4): duplicate siteDir 'new' (also sites[2])",
      'sites[4] (id 10): its root channel needs id 10, which channel 10 of site 1 has',
      'channels[0] (id 10): id 10 already exists',
      'channels[0] (id 10): id 10 is reserved for the root channel of site 10',
      "channels[1] (id 11): indexName 'news' in site 1 already exists",
      'channels[3] (id 12): duplicate id 12 (also channels[2])',
      "channels[3] (id 12): duplicate indexName 'fresh' in site 1 (also channels[2])",
      'channels[5] (id 2): id 2 already exists',
      'channels[5] (id 2): id 2 is reserved for the root channel of site 2',
      "channels[7] (id 15): duplicate guid 'guid-1' (also channels[6])",
      'contents[0] (id 1): id 1 already exists',
      'contents[2] (id 5): duplicate id 5 (also contents[1])',
      'contents[3] (id 6): checked true contradicts checkedLevel 0 (site 1 approves at level 1)',
      "users[0]: userName 'alice' already exists",
      "users[1]: email 'alice@example.org' already exists",
      "users[1]: mobile '100' already exists",
      "users[3]: duplicate userName 'carol' (also users[2])",
      "users[3]: duplicate email 'carol@example.org' (also users[2])",
      'administrators[0] (id 1): id 1 already exists',
      "administrators[0] (id 1): userName 'admin' already exists",
      'apiKeys[0]: key already exists',
      'apiKeys[2]: duplicate key (also apiKeys[1])',
    ]);
  });

  test('channel file paths and rules must stay inside the site, as channel update requires', async () => {
    const errors = await failingImport(database.handle, {
      channels: [
        { id: 30, siteId: 1, parentId: 1, channelName: 'Up', filePath: '../outside.html' },
        {
          id: 31,
          siteId: 1,
          parentId: 1,
          channelName: 'Host',
          channelFilePathRule: 'https://evil.example/x',
        },
        {
          id: 32,
          siteId: 1,
          parentId: 1,
          channelName: 'Fine',
          contentFilePathRule: '/fine/{@ContentID}.html',
        },
      ],
    });
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^channels\[0\] \(id 30\): .*filePath.*'\.\.' segments/);
    expect(errors[1]).toMatch(/^channels\[1\] \(id 31\): .*channelFilePathRule.*not a URL/);
  });

  test('a file whose records are all valid still imports after those refusals', async () => {
    const summary = await importDocument(database.handle, {
      channels: [{ id: 11, siteId: 2, parentId: 20, channelName: 'Below elsewhere', indexName: 'news' }],
      contents: [{ channelId: 11, title: 'Fine', checked: true }],
    });
    expect(summary).toMatchObject({ channels: 1, contents: 1 });
    expect(await db.content.findFirstOrThrow({ where: { title: 'Fine' } })).toMatchObject({
      siteId: 2,
      checked: true,
      checkedLevel: 1,
    });
  });
});
