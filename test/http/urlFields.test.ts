import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { DomainError } from '../../src/domain/errors.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import { DEFAULT_AVATAR_URL } from '../../src/domain/users/avatar.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { ACCEPTED_URLS, REFUSED_URLS } from '../support/urls.ts';

/*
 * Every URL-valued field the API writes, and every URL it derives, under the one URL rule
 * (src/domain/safeText.ts; docs/security/urls-and-captcha.md): over HTTP into the run's database.
 */

let app: TestApp;
let typed: TypedClient;

beforeAll(async () => {
  const fixture = await startFixtureApp('all');
  app = fixture.app;
  typed = await startClient(app, fixture.key);
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

const REFUSED = REFUSED_URLS.map(([url]) => url);

function expectRefused(
  result: { response: Response; error?: { errors?: { path: string }[] } | undefined },
  field: string,
  url: string,
) {
  if (result.response.status !== 400) throw new Error(`${field} = ${JSON.stringify(url)} was not refused`);
  expect(result.error?.errors?.map((problem) => problem.path)).toContain(`/body/${field}`);
}

describe('channel update', () => {
  const update = (body: { imageUrl?: string; linkUrl?: string; indexName?: string; channelIndex?: string }) =>
    typed.client.POST('/api/v1/channels/{siteId}/{channelId}/actions/update', {
      params: { path: { siteId: 1, channelId: 4 } },
      body,
    });

  test.each(['imageUrl', 'linkUrl'] as const)(
    '%s: every unsafe spelling is a 400; nothing is stored',
    async (field) => {
      const before = await app.db.channel.findUniqueOrThrow({ where: { id: 4 } });
      for (const url of REFUSED) expectRefused(await update({ [field]: url }), field, url);
      expect(await app.db.channel.findUniqueOrThrow({ where: { id: 4 } })).toEqual(before);
    },
  );

  test.each(['imageUrl', 'linkUrl'] as const)(
    '%s: paths on the site and http(s) URLs are stored',
    async (field) => {
      for (const url of ACCEPTED_URLS) {
        const { data, response } = await update({ [field]: url });
        expect(response.status).toBe(200);
        expect(data?.[field]).toBe(url);
      }
    },
  );

  test('an index name holds one path segment, under either name', async () => {
    for (const indexName of ['javascript:alert(1)', '..', 'a/b', '%2e%2e', 'a\\b', 'x y']) {
      expectRefused(await update({ indexName }), 'indexName', indexName);
      expectRefused(await update({ channelIndex: indexName }), 'channelIndex', indexName);
    }
    expect((await app.db.channel.findUniqueOrThrow({ where: { id: 4 } })).indexName).toBe('products');
    const { data, response } = await update({ indexName: '产品-2024' });
    expect(response.status).toBe(200);
    expect(data?.indexName).toBe('产品-2024');
    await update({ indexName: 'products' });
  });

  test('navigationUrl stays safe whatever an older row holds', async () => {
    // Rows written before the rule (or by hand): the derived address falls back to the channel id.
    await app.db.channel.update({
      where: { id: 3 },
      data: {
        indexName: 'javascript:alert(1)//',
        channelFilePathRule: '{@channelIndex}',
        linkUrl: '',
        filePath: '',
      },
    });
    const { data, response } = await typed.client.GET('/api/v1/channels/{siteId}/{channelId}', {
      params: { path: { siteId: 1, channelId: 2 } },
    });
    expect(response.status).toBe(200);
    expect(data?.children.map((child) => [child.id, child.navigationUrl])).toEqual([[3, '3']]);
    await app.db.channel.update({ where: { id: 2 }, data: { linkUrl: 'vbscript:x' } });
    const parent = await typed.client.GET('/api/v1/channels/{siteId}/{channelId}', {
      params: { path: { siteId: 1, channelId: 1 } },
    });
    expect(parent.data?.children.find((child) => child.id === 2)?.navigationUrl).toBe('/channels/2.html');
  });
});

describe('content update', () => {
  const FIELDS = ['imageUrl', 'videoUrl', 'fileUrl', 'linkUrl'] as const;
  const update = (body: Partial<Record<(typeof FIELDS)[number], string>>) =>
    typed.client.POST('/api/v1/contents/{siteId}/{channelId}/{id}/actions/update', {
      params: { path: { siteId: 1, channelId: 2, id: 1 } },
      body,
    });

  test.each(FIELDS)('%s: every unsafe spelling is a 400; nothing is stored', async (field) => {
    const before = await app.db.content.findUniqueOrThrow({ where: { id: 1 } });
    for (const url of REFUSED) expectRefused(await update({ [field]: url }), field, url);
    expect(await app.db.content.findUniqueOrThrow({ where: { id: 1 } })).toEqual(before);
  });

  test.each(FIELDS)('%s: paths on the site and http(s) URLs are stored', async (field) => {
    for (const url of ACCEPTED_URLS) {
      const { data, response } = await update({ [field]: url });
      expect(response.status).toBe(200);
      expect(data?.[field]).toBe(url);
    }
  });

  test('a link may be mailto: or tel:; an image, video or file may not', async () => {
    expect((await update({ linkUrl: 'mailto:news@example.org' })).response.status).toBe(200);
    for (const field of ['imageUrl', 'videoUrl', 'fileUrl'] as const)
      expectRefused(await update({ [field]: 'mailto:news@example.org' }), field, 'mailto:');
  });
});

describe('user avatars', () => {
  let serial = 0;
  const create = (avatarUrl: string) =>
    typed.client.POST('/api/v1/users', {
      body: { userName: `avatar${++serial}`, password: 'Avatar2024', avatarUrl },
    });
  const avatarOf = (id: number) =>
    typed.client.GET('/api/v1/users/{id}/avatar', { params: { path: { id } } });

  test('create user: every unsafe avatarUrl is a 400; no user is created', async () => {
    const before = await app.db.user.count();
    for (const url of REFUSED) expectRefused(await create(url), 'avatarUrl', url);
    expect(await app.db.user.count()).toBe(before);
  });

  test('a safe avatarUrl is stored and served by the public avatar endpoint', async () => {
    for (const url of ['https://cdn.example/a.png', '/upload/avatars/12.png', '@/upload/a.png']) {
      const { data, response } = await create(url);
      expect(response.status).toBe(200);
      const served = await avatarOf(data?.id ?? 0);
      expect(served.data).toEqual({ value: url });
    }
  });

  test('an unsafe avatarUrl stored before the rule is never served', async () => {
    const account = { passwordHash: 'unused', passwordSalt: 'unused' };
    for (const avatarUrl of ['javascript:alert(1)', '//evil.example/a.png', 'data:image/png;base64,AA==']) {
      const { id } = await app.db.user.create({
        data: { userName: `old${++serial}`, avatarUrl, ...account },
      });
      const { data, response } = await avatarOf(id);
      expect(response.status).toBe(200);
      expect(data).toEqual({ value: DEFAULT_AVATAR_URL });
    }
  });
});

describe('import obeys the same rule', () => {
  test('every unsafe URL, index name and path rule of a file is reported; nothing is imported', async () => {
    const before = await app.db.channel.count();
    const error = await importDocument(app, {
      sites: [
        {
          id: 30,
          siteDir: 'third',
          siteName: 'Third',
          attributes: { webUrl: 'javascript:alert(1)', channelFilePathRule: '//evil/{@channelId}' },
        },
      ],
      channels: [
        { id: 30, siteId: 30, channelName: 'Root', imageUrl: '%6a%61vascript:alert(1)' },
        { id: 31, siteId: 30, parentId: 30, channelName: 'A', indexName: '../up', linkUrl: 'data:,x' },
      ],
      contents: [{ channelId: 31, title: 'T', videoUrl: '\\\\evil\\v.mp4', fileUrl: 'file:///etc/passwd' }],
      users: [{ userName: 'imported', password: 'Import2024', avatarUrl: 'java%0ascript:alert(1)' }],
    }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).fields.map((field) => field.message)).toEqual([
      "sites[0] (id 30): attribute 'webUrl' must be a path on the site or an http(s) URL",
      "sites[0] (id 30): attribute 'channelFilePathRule' must be a path relative to the site, not a URL",
      "channels[0] (id 30): field 'imageUrl' must be a path on the site or an http(s) URL",
      "channels[1] (id 31): field 'indexName' must hold only letters, digits, '-', '_', '.' and '~' (one path segment)",
      "channels[1] (id 31): field 'linkUrl' must be a path on the site or an http, https, mailto or tel link",
      "contents[0]: field 'videoUrl' must not contain backslashes",
      "contents[0]: field 'fileUrl' must be a path on the site or an http(s) URL",
      "users[0]: field 'avatarUrl' must be a path on the site or an http(s) URL",
    ]);
    expect(await app.db.channel.count()).toBe(before);
  });
});
