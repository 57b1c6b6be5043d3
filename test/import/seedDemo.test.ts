import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Db } from '../../src/db/client.ts';
import { md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import { digestApiKey } from '../../src/domain/crypto/apiKeys.ts';
import { SCOPES } from '../../src/domain/principal.ts';
import { DEMO_ACCOUNTS, demoDocument, seedDemo } from '../../src/domain/seed/demo.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

describe('seedDemo', () => {
  let database: TestDatabase;
  let db: Db;
  let apiKey: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.handle.db;
    ({ apiKey } = await seedDemo(db));
  });
  afterAll(() => database.drop());

  test('the demo document is the same on every call', () => {
    expect(demoDocument()).toEqual(demoDocument());
  });

  test('creates the root demo site with a two-level channel tree', async () => {
    expect(await db.site.findMany()).toMatchObject([
      { id: 1, siteName: 'Demo site', siteDir: 'demo', isRoot: true },
    ]);
    const channels = await db.channel.findMany({ orderBy: { id: 'asc' } });
    expect(
      channels.map(({ id, parentId, indexName, parentsPath, childrenCount }) => [
        id,
        parentId,
        indexName,
        parentsPath,
        childrenCount,
      ]),
    ).toEqual([
      [1, 0, null, '', 2],
      [2, 1, 'news', '1', 2],
      [3, 2, 'news-tech', '1,2', 0],
      [4, 2, 'news-company', '1,2', 0],
      [5, 1, 'products', '1', 1],
      [6, 5, 'products-software', '1,5', 0],
    ]);
    expect(channels[0]!.channelName).toBe('Demo site');
  });

  test('creates forty varied contents in every review state', async () => {
    const contents = await db.content.findMany({ orderBy: { id: 'asc' } });
    expect(contents).toHaveLength(40);
    const levels = contents.map((content) => content.checkedLevel);
    expect(levels.filter((level) => level === 1)).toHaveLength(34);
    expect(levels.filter((level) => level === 0)).toHaveLength(4);
    expect(levels.filter((level) => level === -99)).toHaveLength(1);
    expect(levels.filter((level) => level === -1)).toHaveLength(1);
    expect(contents.filter((content) => content.checked)).toHaveLength(34);
    expect(new Set(contents.map((content) => content.channelId))).toEqual(new Set([2, 3, 4, 5, 6]));
    expect(new Set(contents.map((content) => content.title)).size).toBe(40);
    for (const flag of ['top', 'recommend', 'hot', 'color'] as const) {
      const set = contents.filter((content) => content[flag]).length;
      expect(set).toBeGreaterThan(0);
      expect(set).toBeLessThan(40);
    }
    expect(contents.some((content) => content.groupNames.split(',').includes('featured'))).toBe(true);
    expect(contents.some((content) => content.tagNames.includes(','))).toBe(true);
    expect(new Set(contents.map((content) => content.hits)).size).toBeGreaterThan(30);
    expect(new Set(contents.map((content) => content.addDate.getTime())).size).toBe(40);
    expect(contents[0]).toMatchObject({ title: 'Welcome to the demo site', top: true, checked: true });
  });

  test('creates the documented accounts', async () => {
    const user = await db.user.findUniqueOrThrow({ where: { userName: DEMO_ACCOUNTS.user.userName } });
    expect(await verifyMd5Password(md5Hex(DEMO_ACCOUNTS.user.password), user)).toBe(true);
    const admin = await db.administrator.findUniqueOrThrow({
      where: { userName: DEMO_ACCOUNTS.administrator.userName },
    });
    expect(await verifyMd5Password(md5Hex(DEMO_ACCOUNTS.administrator.password), admin)).toBe(true);
  });

  test('returns an API key with every scope, stored as its digest', async () => {
    expect(apiKey).toMatch(/^cms_[A-Za-z0-9_-]{43}$/);
    const row = await db.apiKey.findUniqueOrThrow({ where: { digest: digestApiKey(apiKey) } });
    expect(row).toMatchObject({ title: 'Demo key', scopes: SCOPES.join(','), expiresAt: null });
  });
});
