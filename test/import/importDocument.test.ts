import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Db } from '../../src/db/client.ts';
import { md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import { digestApiKey } from '../../src/domain/crypto/apiKeys.ts';
import { formatDateTime } from '../../src/domain/dates.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { rowCounts } from './rowCounts.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const API_KEY = 'imported-key-0123456789abcdefghijklmnop';

function sampleDocument() {
  return {
    sites: [
      { id: 3, siteDir: 'news', siteName: 'News site', isRoot: true, attributes: { checkContentLevel: 2 } },
      { siteDir: 'blog', siteName: 'Blog' },
    ],
    channels: [
      { id: 4, siteId: 3, parentId: 3, channelName: 'World', indexName: 'world', groupNames: ['nav', 'top'] },
      {
        id: 5,
        siteId: 3,
        parentId: 4,
        channelName: 'Europe',
        indexName: 'europe',
        titleColumnWidth: 120,
        isAllContents: true,
        createChannelIdsIfContentChanged: [3, 4],
        addDate: '2023-05-06 07:08:09',
        parentsPath: [99],
        childrenCount: 42,
      },
      { siteId: 3, parentId: 4, channelName: 'Asia', indexName: '' },
    ],
    contents: [
      {
        id: 17,
        channelId: 5,
        title: 'Kept id',
        body: '<p>body</p>',
        content: '<p>ignored</p>',
        checkedLevel: 2,
        groupNames: ['home', 'featured'],
        tagNames: ['eu'],
        hits: 12,
        top: true,
        addDate: '2024-02-03 04:05:06',
      },
      { channelId: 4, siteId: 3, title: 'Assigned id', content: '<p>from content</p>', checkedLevel: 1 },
      { id: 20, channelId: 3, title: 'Approved only', checked: true },
      { id: 21, channelId: 3, title: 'Withdrawn only', checked: false },
      { id: 22, channelId: 3, title: 'Draft', checkedLevel: -99, linkUrl: 'https://example.org/x' },
    ],
    users: [
      {
        id: 7,
        userName: 'alice',
        password: 'Secret123',
        email: 'alice@example.org',
        mobile: '',
        passwordFormat: 'Clear',
      },
      { userName: 'bob', password: 'Other456', checked: false, createDate: '2022-01-02 03:04:05' },
    ],
    administrators: [
      { id: 2, userName: 'root', password: 'Admin789', siteId: 3, siteIdCollection: '3', passwordSalt: 'x' },
    ],
    apiKeys: [{ title: 'Imported', key: API_KEY, scopes: ['Contents', 'STL'] }],
  };
}

describe('importDocument', () => {
  let database: TestDatabase;
  let db: Db;
  const before = new Date(Date.now() - 1000);

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.handle.db;
  });
  afterAll(() => database.drop());

  test('writes every table, keeping the ids given and assigning the others', async () => {
    const summary = await importDocument(database.handle, sampleDocument());
    expect(summary).toEqual({
      sites: 2,
      channels: 5,
      contents: 5,
      users: 2,
      administrators: 1,
      apiKeys: 1,
      rootChannelsCreated: 2,
    });
    expect(await rowCounts(db)).toEqual({
      sites: 2,
      channels: 5,
      contents: 5,
      users: 2,
      administrators: 1,
      apiKeys: 1,
    });
  });

  test('sites keep their fields, store only the attributes given, and a new site gets a free id', async () => {
    const sites = await db.site.findMany({ orderBy: { id: 'asc' } });
    expect(sites[0]).toEqual({
      id: 3,
      siteDir: 'news',
      siteName: 'News site',
      tableName: 'siteserver_Content',
      isRoot: true,
      parentId: 0,
      taxis: 0,
      attributes: '{"checkContentLevel":2}',
    });
    // Above every site and channel id of the file, so that its root channel's id is free too.
    expect(sites[1]).toMatchObject({ id: 6, siteDir: 'blog', isRoot: false, attributes: '{}' });
  });

  test('root channels are created for the sites, and tree fields are derived, not taken from input', async () => {
    const channels = await db.channel.findMany({ orderBy: { id: 'asc' } });
    expect(
      channels.map(
        ({ id, siteId, parentId, channelName, indexName, parentsPath, parentsCount, childrenCount }) => ({
          id,
          siteId,
          parentId,
          channelName,
          indexName,
          parentsPath,
          parentsCount,
          childrenCount,
        }),
      ),
    ).toEqual([
      {
        id: 3,
        siteId: 3,
        parentId: 0,
        channelName: 'News site',
        indexName: null,
        parentsPath: '',
        parentsCount: 0,
        childrenCount: 1,
      },
      {
        id: 4,
        siteId: 3,
        parentId: 3,
        channelName: 'World',
        indexName: 'world',
        parentsPath: '3',
        parentsCount: 1,
        childrenCount: 2,
      },
      {
        id: 5,
        siteId: 3,
        parentId: 4,
        channelName: 'Europe',
        indexName: 'europe',
        parentsPath: '3,4',
        parentsCount: 2,
        childrenCount: 0,
      },
      {
        id: 6,
        siteId: 6,
        parentId: 0,
        channelName: 'Blog',
        indexName: null,
        parentsPath: '',
        parentsCount: 0,
        childrenCount: 0,
      },
      {
        id: 7,
        siteId: 3,
        parentId: 4,
        channelName: 'Asia',
        indexName: null,
        parentsPath: '3,4',
        parentsCount: 2,
        childrenCount: 0,
      },
    ]);
    const europe = channels[2]!;
    expect(europe.guid).toMatch(UUID);
    expect(JSON.parse(europe.extras)).toEqual({ titleColumnWidth: 120, isAllContents: true });
    expect(europe.createChannelIdsIfContentChanged).toBe('3,4');
    expect(formatDateTime(europe.addDate)).toBe('2023-05-06 07:08:09');
    expect(channels[1]).toMatchObject({
      groupNames: 'nav,top',
      linkType: 'None',
      defaultTaxisType: 'OrderByTaxisDesc',
      isCreateChannelIfContentChanged: true,
      listColumns: null,
      extras: '{}',
    });
    expect(channels[1]!.addDate.getTime()).toBeGreaterThanOrEqual(before.getTime());
  });

  test('contents take the defaults, body over content, and review state from the site level', async () => {
    const contents = await db.content.findMany({ orderBy: { id: 'asc' } });
    expect(
      contents.map(({ id, siteId, channelId, title, body, checked, checkedLevel }) => ({
        id,
        siteId,
        channelId,
        title,
        body,
        checked,
        checkedLevel,
      })),
    ).toEqual([
      {
        id: 17,
        siteId: 3,
        channelId: 5,
        title: 'Kept id',
        body: '<p>body</p>',
        checked: true,
        checkedLevel: 2,
      },
      { id: 20, siteId: 3, channelId: 3, title: 'Approved only', body: '', checked: true, checkedLevel: 2 },
      { id: 21, siteId: 3, channelId: 3, title: 'Withdrawn only', body: '', checked: false, checkedLevel: 0 },
      { id: 22, siteId: 3, channelId: 3, title: 'Draft', body: '', checked: false, checkedLevel: -99 },
      // Level 1 does not reach the site's checkContentLevel 2.
      {
        id: 23,
        siteId: 3,
        channelId: 4,
        title: 'Assigned id',
        body: '<p>from content</p>',
        checked: false,
        checkedLevel: 1,
      },
    ]);
    const kept = contents[0]!;
    expect(kept).toMatchObject({
      groupNames: 'home,featured',
      tagNames: 'eu',
      hits: 12,
      top: true,
      recommend: false,
      linkType: 'None',
      linkUrl: null,
      recycled: false,
      settings: '{}',
    });
    expect(kept.guid).toMatch(UUID);
    expect(formatDateTime(kept.addDate)).toBe('2024-02-03 04:05:06');
    expect(kept.lastModifiedDate.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(contents[3]!.linkUrl).toBe('https://example.org/x');
  });

  test('passwords are stored hashed and verify against the MD5 of the plain text', async () => {
    const alice = await db.user.findUniqueOrThrow({ where: { id: 7 } });
    expect(alice).toMatchObject({
      userName: 'alice',
      email: 'alice@example.org',
      mobile: null,
      checked: true,
    });
    expect(alice.passwordHash).not.toContain('Secret123');
    expect(alice.passwordHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await verifyMd5Password(md5Hex('Secret123'), alice)).toBe(true);
    expect(await verifyMd5Password(md5Hex('secret123'), alice)).toBe(false);

    const bob = await db.user.findUniqueOrThrow({ where: { userName: 'bob' } });
    expect(bob).toMatchObject({ id: 8, checked: false, locked: false, countOfLogin: 0 });
    expect(formatDateTime(bob.createDate)).toBe('2022-01-02 03:04:05');

    const root = await db.administrator.findUniqueOrThrow({ where: { id: 2 } });
    expect(root).toMatchObject({ userName: 'root', siteId: 3, siteIdCollection: '3', isLockedOut: false });
    expect(root.passwordSalt).not.toBe('x');
    expect(await verifyMd5Password(md5Hex('Admin789'), root)).toBe(true);
  });

  test('API keys are stored as their digest only', async () => {
    const [key] = await db.apiKey.findMany();
    expect(key).toMatchObject({
      id: 1,
      title: 'Imported',
      digest: digestApiKey(API_KEY),
      scopes: 'Contents,STL',
      expiresAt: null,
      revokedAt: null,
    });
    expect(JSON.stringify(key)).not.toContain(API_KEY);
  });

  test('channels added to an existing site update the tree fields of their new parent', async () => {
    const summary = await importDocument(database.handle, {
      channels: [{ id: 30, siteId: 3, parentId: 5, channelName: 'France', indexName: 'france' }],
      contents: [{ channelId: 30, title: 'Paris' }],
    });
    expect(summary).toMatchObject({ sites: 0, channels: 1, contents: 1, rootChannelsCreated: 0 });
    expect(await db.channel.findUniqueOrThrow({ where: { id: 5 } })).toMatchObject({ childrenCount: 1 });
    expect(await db.channel.findUniqueOrThrow({ where: { id: 30 } })).toMatchObject({
      parentsPath: '3,4,5',
      parentsCount: 3,
      childrenCount: 0,
    });
    expect(await db.content.findFirstOrThrow({ where: { title: 'Paris' } })).toMatchObject({
      id: 24,
      siteId: 3,
    });
  });

  test('rows inserted later without an id do not collide with imported ids', async () => {
    const site = await db.site.create({ data: { siteDir: 'later', siteName: 'Later' } });
    expect(site.id).toBe(7);
    const channel = await db.channel.create({
      data: { guid: 'later-channel', siteId: 3, channelName: 'Later' },
    });
    expect(channel.id).toBe(31);
    const content = await db.content.create({ data: { guid: 'later-content', siteId: 3, channelId: 4 } });
    expect(content.id).toBe(25);
    const user = await db.user.create({ data: { userName: 'carol', passwordHash: 'h', passwordSalt: 's' } });
    expect(user.id).toBe(9);
    const admin = await db.administrator.create({
      data: { userName: 'ops', passwordHash: 'h', passwordSalt: 's' },
    });
    expect(admin.id).toBe(3);
    const key = await db.apiKey.create({ data: { title: 'Later', digest: 'd', scopes: 'STL' } });
    expect(key.id).toBe(2);
  });
});

describe('importDocument at scale', () => {
  // How long this takes is the benchmark's business (npm run bench), not a test's.
  test('imports 10,000 contents in one go', async () => {
    const database = await createTestDatabase();
    try {
      const contents = Array.from({ length: 10_000 }, (_, i) => ({
        id: i + 1,
        channelId: 2 + (i % 2),
        title: `Article ${i}`,
        body: `<p>${'Lorem ipsum dolor sit amet. '.repeat(8)}</p>`,
        groupNames: i % 3 === 0 ? ['home'] : [],
        tagNames: ['bulk', `t${i % 10}`],
        checkedLevel: i % 4 === 0 ? 0 : 1,
        hits: i,
        addDate: '2024-06-01 12:00:00',
      }));
      const summary = await importDocument(database.handle, {
        sites: [{ id: 1, siteDir: 'bulk', siteName: 'Bulk' }],
        channels: [
          { id: 2, siteId: 1, parentId: 1, channelName: 'A' },
          { id: 3, siteId: 1, parentId: 2, channelName: 'B' },
        ],
        contents,
      });
      expect(summary.contents).toBe(10_000);
      expect(await database.handle.db.content.count({ where: { checked: true } })).toBe(7_500);
      expect(await database.handle.db.content.findUniqueOrThrow({ where: { id: 10_000 } })).toMatchObject({
        channelId: 3,
        hits: 9_999,
        tagNames: 'bulk,t9',
      });
    } finally {
      await database.drop();
    }
  });
});
