import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import type { Db, DbHandle } from '../../src/db/client.ts';
import { md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import { digestApiKey } from '../../src/domain/crypto/apiKeys.ts';
import { exportDocument } from '../../src/domain/export/index.ts';
import { importDocument, importFrom } from '../../src/domain/import/index.ts';
import { streamSource } from '../../src/domain/import/source.ts';
import { uploadAvatar } from '../../src/domain/users/avatar.ts';
import { reencodeAvatar } from '../../src/domain/users/avatarImage.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

/*
 * Export, then import of that export into an empty database: every record comes back equal,
 * except the secrets an export never carries (password hashes, key digests).
 */

const KEY = 'round-trip-key-0123456789abcdefghijklmnop';

async function exportText(database: Pick<DbHandle, 'db' | 'provider'>): Promise<string> {
  const parts: string[] = [];
  await exportDocument(database, { write: async (text) => void parts.push(text) });
  return parts.join('');
}

/** RGBA pixels of a small picture: a gradient, so that its PNG is not trivially compressible. */
function pixels(width: number, height: number): Buffer {
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++)
    data.set([(i * 7) % 256, (i * 13) % 256, (i * 29) % 256, 255], i * 4);
  return data;
}

function pngOf(width: number, height: number): Buffer {
  const png = new PNG({ width, height });
  png.data = pixels(width, height);
  return PNG.sync.write(png);
}

/** Every row of every table an import writes, ordered by id, secrets left out. */
async function everything(db: Db) {
  const byId = { orderBy: { id: 'asc' as const } };
  return {
    sites: await db.site.findMany(byId),
    channels: (await db.channel.findMany(byId)).map(({ extras, ...row }) => ({
      ...row,
      // The same extras; the export writes their keys sorted.
      extras: JSON.parse(extras) as unknown,
    })),
    contents: await db.content.findMany(byId),
    users: (await db.user.findMany(byId)).map(({ passwordHash: _h, passwordSalt: _s, ...row }) => row),
    administrators: (await db.administrator.findMany(byId)).map(
      ({ passwordHash: _h, passwordSalt: _s, ...row }) => row,
    ),
    apiKeys: (await db.apiKey.findMany(byId)).map(({ digest: _d, ...row }) => row),
    // An avatar's version and date are the import's own, as a content's version is.
    avatars: (await db.userAvatar.findMany({ orderBy: { userId: 'asc' } })).map(
      ({ version: _v, updatedAt: _u, bytes, ...row }) => ({
        ...row,
        bytes: Buffer.from(bytes).toString('hex'),
      }),
    ),
  };
}

describe('export and import round trip', () => {
  let source: TestDatabase;
  let target: TestDatabase;
  let text: string;

  beforeAll(async () => {
    source = await createTestDatabase();
    target = await createTestDatabase();
    const db = source.handle.db;
    await importDocument(source.handle, {
      sites: [
        {
          id: 3,
          siteDir: 'news',
          siteName: 'News',
          isRoot: true,
          attributes: { checkContentLevel: 2, pageSize: 12 },
        },
        { id: 8, siteDir: 'blog', siteName: 'Blog', parentId: 3, taxis: 4 },
      ],
      channels: [
        {
          id: 4,
          siteId: 3,
          parentId: 3,
          channelName: 'World',
          indexName: 'world',
          groupNames: ['nav', 'top'],
          titleColumnWidth: 120,
          isAllContents: true,
          createChannelIdsIfContentChanged: [3, 4],
          listColumns: 'title,addDate',
        },
        // A child listed before its parent.
        { id: 6, siteId: 3, parentId: 5, channelName: 'Paris', filePath: 'world/paris.html' },
        { id: 5, siteId: 3, parentId: 4, channelName: 'Europe', linkUrl: 'https://example.org/eu' },
      ],
      contents: [
        {
          id: 17,
          channelId: 5,
          title: 'Approved',
          subTitle: 'Sub',
          body: '<p>body ✓ "quoted"</p>',
          checkedLevel: 2,
          groupNames: ['home'],
          tagNames: ['eu', 'fr'],
          hits: 12,
          top: true,
          lastHitsDate: '2024-03-04 05:06:07',
          linkUrl: 'https://example.org/x',
        },
        { id: 18, channelId: 6, title: 'Pending', checkedLevel: 1 },
        { id: 19, channelId: 8, title: 'Draft in the blog', checkedLevel: -99 },
        { id: 20, channelId: 4, title: 'Rejected', checkedLevel: -1 },
      ],
      users: [
        { id: 7, userName: 'alice', password: 'Secret123', email: 'alice@example.org', openId: 'oid-1' },
        { id: 9, userName: 'bob', password: 'Other456', checked: false, mobile: '555' },
      ],
      administrators: [
        {
          id: 2,
          userName: 'root',
          password: 'Admin789',
          siteId: 3,
          siteIdCollection: '3,8',
          displayName: 'Root',
        },
      ],
      apiKeys: [
        { id: 5, title: 'Reader', key: KEY, scopes: ['Contents', 'STL'], expiresAt: '2099-01-02 03:04:05' },
      ],
    });
    // State only the service writes: the recycle bin, settings, lockouts, token versions, key use.
    await db.content.update({
      where: { id: 20 },
      data: {
        recycled: true,
        recycledDate: new Date('2025-01-02T03:04:05.678Z'),
        settings: '{"color":"red"}',
      },
    });
    await db.user.update({
      where: { id: 9 },
      data: { locked: true, lockedUntil: new Date('2030-05-06T07:08:09.123Z'), tokenVersion: 3 },
    });
    await db.administrator.update({ where: { id: 2 }, data: { tokenVersion: 1, countOfFailedLogin: 2 } });
    await uploadAvatar(db, { kind: 'apiKey', apiKeyId: 5, scopes: new Set(['Users']) }, 7, pngOf(24, 16));
    await db.apiKey.update({
      where: { id: 5 },
      data: { lastUsedAt: new Date('2026-01-01T00:00:00.001Z'), rateLimitPerMinute: 60 },
    });
    text = await exportText(source.handle);
    const summary = await importFrom(
      target.handle,
      streamSource(() => Readable.from([text])),
    );
    expect(summary).toEqual({
      sites: 2,
      channels: 5,
      contents: 4,
      users: 2,
      administrators: 1,
      apiKeys: 1,
      rootChannelsCreated: 0,
    });
  });
  afterAll(async () => {
    await source.drop();
    await target.drop();
  });

  test('every record comes back equal, to the millisecond', async () => {
    const before = await everything(source.handle.db);
    const after = await everything(target.handle.db);
    expect(after).toEqual(before);
    // The comparison is not vacuous.
    expect(after.contents.find((row) => row.id === 20)).toMatchObject({
      recycled: true,
      settings: '{"color":"red"}',
    });
    expect(after.users.find((row) => row.id === 9)).toMatchObject({ tokenVersion: 3, locked: true });
    expect(after.avatars).toEqual([
      { userId: 7, width: 24, height: 16, bytes: reencodeAvatar(pngOf(24, 16)).png.toString('hex') },
    ]);
    expect(after.apiKeys[0]).toMatchObject({
      title: 'Reader',
      rateLimitPerMinute: 60,
      scopes: 'Contents,STL',
    });
  });

  test('an export of the imported database is the same file', async () => {
    expect(await exportText(target.handle)).toBe(text);
  });

  test('the export carries no password material and no key secret', async () => {
    const db = source.handle.db;
    const secrets = [
      ...(await db.user.findMany()).flatMap((row) => [row.passwordHash, row.passwordSalt]),
      ...(await db.administrator.findMany()).flatMap((row) => [row.passwordHash, row.passwordSalt]),
      ...(await db.apiKey.findMany()).map((row) => row.digest),
      KEY,
      'Secret123',
    ];
    for (const secret of secrets) expect(text).not.toContain(secret);
    const document = JSON.parse(text) as Record<string, Record<string, unknown>[]>;
    expect(document.users?.map((user) => user.password)).toEqual([null, null]);
    // Alice's uploaded avatar travels as its PNG; Bob has none.
    expect(document.users?.map((user) => typeof user.avatarPng)).toEqual(['string', 'undefined']);
    expect(document.apiKeys?.[0]?.key).toBeNull();
    expect(Object.keys(document)).toEqual([
      'sites',
      'channels',
      'contents',
      'users',
      'administrators',
      'apiKeys',
    ]);
  });

  test('imported accounts have no usable password, and imported keys no usable secret', async () => {
    const db = target.handle.db;
    const alice = await db.user.findUniqueOrThrow({ where: { id: 7 } });
    expect(alice).toMatchObject({ passwordHash: '', passwordSalt: '' });
    expect(await verifyMd5Password(md5Hex('Secret123'), alice)).toBe(false);
    expect(await verifyMd5Password(md5Hex(''), alice)).toBe(false);
    const root = await db.administrator.findUniqueOrThrow({ where: { id: 2 } });
    expect(await verifyMd5Password(md5Hex('Admin789'), root)).toBe(false);
    const key = await db.apiKey.findUniqueOrThrow({ where: { id: 5 } });
    expect(key.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(key.digest).not.toBe(digestApiKey(KEY));
  });

  test('importing the export again is refused record by record, changing nothing', async () => {
    const error = await importFrom(
      target.handle,
      streamSource(() => Readable.from([text])),
    ).then(
      () => undefined,
      (thrown: unknown) => thrown as { message: string; fields: { message: string }[] },
    );
    expect(error?.message).toMatch(/^The import file has \d+ problems; nothing was imported$/);
    // Every record clashes with itself: each section is named, each content by its id.
    expect(error?.fields.length).toBeGreaterThanOrEqual(15);
    const messages = error?.fields.map((field) => field.message) ?? [];
    expect(messages).toContain('sites[0] (id 3): id 3 already exists');
    expect(messages).toContain('contents[3] (id 20): id 20 already exists');
    expect(messages).toContain("users[1] (id 9): userName 'bob' already exists");
    expect(await everything(target.handle.db)).toEqual(await everything(source.handle.db));
  });

  test('a guid used twice in the file is named, however it is written', async () => {
    const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const error = await importDocument(target.handle, {
      contents: [
        { channelId: 4, guid: uuid, title: 'a' },
        { channelId: 4, guid: uuid.toUpperCase(), title: 'upper case: another guid' },
        { channelId: 4, guid: uuid, title: 'b' },
        { channelId: 4, guid: 'plain-guid', title: 'c' },
        { channelId: 4, guid: 'plain-guid', title: 'd' },
      ],
    }).then(
      () => undefined,
      (thrown: unknown) => thrown as { fields: { message: string }[] },
    );
    expect(error?.fields.map((field) => field.message)).toEqual([
      `contents[2]: duplicate guid '${uuid}' (also contents[0])`,
      "contents[4]: duplicate guid 'plain-guid' (also contents[3])",
    ]);
  });

  test('an avatar in the file is re-encoded as an upload is; one that is not an image is named, and nothing is written', async () => {
    const jpegBytes = jpeg.encode({ data: pixels(10, 6), width: 10, height: 6 }, 90).data;
    const summary = await importDocument(target.handle, {
      users: [
        { id: 40, userName: 'carol', password: null, avatarPng: Buffer.from(jpegBytes).toString('base64') },
      ],
    });
    expect(summary.users).toBe(1);
    const stored = await target.handle.db.userAvatar.findUniqueOrThrow({ where: { userId: 40 } });
    expect(stored).toMatchObject({ width: 10, height: 6, version: 1 });
    // Stored as a PNG, as an upload of the same JPEG would be.
    expect(Buffer.from(stored.bytes).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(Buffer.from(stored.bytes).equals(reencodeAvatar(jpegBytes).png)).toBe(true);

    const error = await importDocument(target.handle, {
      users: [
        { id: 41, userName: 'dave', password: null, avatarPng: Buffer.from('<svg/>').toString('base64') },
        { id: 42, userName: 'erin', password: null, avatarPng: 'not base64!' },
        { id: 43, userName: 'frank', password: null, avatarPng: pngOf(4, 4).toString('base64') },
      ],
    }).then(
      () => undefined,
      (thrown: unknown) => thrown as { fields: { message: string }[] },
    );
    expect(error?.fields.map((field) => field.message)).toEqual([
      "users[0] (id 41): field 'avatarPng': The file is not a PNG, JPEG or GIF image",
      "users[1] (id 42): field 'avatarPng' must be base64",
    ]);
    expect(await target.handle.db.user.count({ where: { id: { in: [41, 42, 43] } } })).toBe(0);
    expect(await target.handle.db.userAvatar.count({ where: { userId: { in: [41, 42, 43] } } })).toBe(0);
  });
});
