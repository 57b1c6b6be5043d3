import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Db } from '../../src/db/client.ts';
import { md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import { passwordProblem } from '../../src/domain/accounts/rules.ts';
import { digestApiKey } from '../../src/domain/crypto/apiKeys.ts';
import { SCOPES } from '../../src/domain/principal.ts';
import {
  DEMO_USER_NAMES,
  type DemoSecrets,
  demoDocument,
  generateDemoSecrets,
  seedDemo,
  seedDemoWhenEmpty,
} from '../../src/domain/seed/demo.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

describe('seedDemo', () => {
  let database: TestDatabase;
  let db: Db;
  let secrets: DemoSecrets;
  let apiKey: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.handle.db;
    secrets = await seedDemo(database.handle);
    ({ apiKey } = secrets);
  });
  afterAll(() => database.drop());

  test('the demo document is the same on every call but for the secrets it is given', () => {
    const given = generateDemoSecrets();
    expect(demoDocument(given)).toEqual(demoDocument(given));
  });

  test('every seeding has its own random passwords and key', () => {
    const [a, b] = [generateDemoSecrets(), generateDemoSecrets()];
    expect(a.passwords.user).not.toBe(b.passwords.user);
    expect(a.passwords.administrator).not.toBe(b.passwords.administrator);
    expect(a.passwords.user).not.toBe(a.passwords.administrator);
    expect(a.apiKey).not.toBe(b.apiKey);
    expect(a.passwords.user).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });

  test('every generated password meets the password rule (a seeding never fails on its own draw)', () => {
    // One draw of 16 base64url characters in fifteen has no digit: 300 draws would all but surely hit one.
    for (let i = 0; i < 150; i++) {
      const { passwords } = generateDemoSecrets();
      for (const password of [passwords.user, passwords.administrator]) {
        expect(passwordProblem(password)).toBeUndefined();
      }
    }
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

  test('creates the accounts with the passwords it returned, not the once published ones', async () => {
    const user = await db.user.findUniqueOrThrow({ where: { userName: DEMO_USER_NAMES.user } });
    expect(await verifyMd5Password(md5Hex(secrets.passwords.user), user)).toBe(true);
    expect(await verifyMd5Password(md5Hex('demo1234'), user)).toBe(false);
    const admin = await db.administrator.findUniqueOrThrow({
      where: { userName: DEMO_USER_NAMES.administrator },
    });
    expect(await verifyMd5Password(md5Hex(secrets.passwords.administrator), admin)).toBe(true);
    expect(await verifyMd5Password(md5Hex('admin1234'), admin)).toBe(false);
  });

  test('returns an API key with every scope, stored as its digest', async () => {
    expect(apiKey).toMatch(/^cms_[A-Za-z0-9_-]{43}$/);
    const row = await db.apiKey.findUniqueOrThrow({ where: { digest: digestApiKey(apiKey) } });
    expect(row).toMatchObject({ title: 'Demo key', scopes: SCOPES.join(','), expiresAt: null });
  });

  test('seedDemoWhenEmpty leaves a database with a site alone', async () => {
    expect(await seedDemoWhenEmpty(database.handle, database.url)).toBeUndefined();
    expect(await db.apiKey.count()).toBe(1);
    expect(await db.content.count()).toBe(40);
  });
});

/** Makes every insert into ApiKey (the demo's last table) fail, as a real database error. */
async function failApiKeyInserts(database: TestDatabase): Promise<void> {
  const db = database.handle.db;
  if (database.handle.provider === 'sqlite') {
    await db.$executeRawUnsafe(
      `CREATE TRIGGER "refuse_api_keys" BEFORE INSERT ON "ApiKey" BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
    );
    return;
  }
  await db.$executeRawUnsafe(
    `CREATE FUNCTION "refuse_api_keys"() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$ LANGUAGE plpgsql`,
  );
  await db.$executeRawUnsafe(
    `CREATE TRIGGER "refuse_api_keys" BEFORE INSERT ON "ApiKey" FOR EACH ROW EXECUTE FUNCTION "refuse_api_keys"()`,
  );
}

describe('seedDemo failing mid-way', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    await failApiKeyInserts(database);
  });
  afterAll(() => database.drop());

  test('writes nothing: the catalogue, the accounts and the key are one transaction', async () => {
    const db = database.handle.db;
    await expect(seedDemoWhenEmpty(database.handle, database.url)).rejects.toThrow(/injected failure/);
    const counts = await Promise.all([
      db.site.count(),
      db.channel.count(),
      db.content.count(),
      db.user.count(),
      db.administrator.count(),
      db.apiKey.count(),
    ]);
    expect(counts).toEqual([0, 0, 0, 0, 0, 0]);
  });
});
