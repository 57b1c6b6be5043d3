import type { DbHandle } from '../../src/db/client.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import type { Scope } from '../../src/domain/principal.ts';
import { startTestApp, type TestApp, type TestAppOptions } from './app.ts';

/*
 * A small, fully specified catalogue for list/record tests: two sites, a channel tree, and contents
 * whose every filtered field is chosen so each filter selects a known set of ids.
 *
 * Site 1 (approves at level 2):  1 root ─┬─ 2 news ── 3 tech
 *                                        └─ 4 products
 * Site 10:                       10 root ── 11 other
 */

export const SITE_LEVEL = 2;

interface ContentSeed {
  id: number;
  channelId: number;
  title: string;
  taxis: number;
  hits: number;
  checkedLevel: number;
  top?: boolean;
  recommend?: boolean;
  hot?: boolean;
  color?: boolean;
  groupNames?: string[];
  tagNames?: string[];
  author?: string;
  addDate: string;
  linkUrl?: string | null;
}

export const CONTENTS: ContentSeed[] = [
  {
    id: 1,
    channelId: 2,
    title: 'Alpha release notes',
    taxis: 1,
    hits: 10,
    checkedLevel: 2,
    top: true,
    groupNames: ['featured'],
    tagNames: ['release'],
    author: 'Ann',
    addDate: '2024-01-01 08:00:00',
  },
  {
    id: 2,
    channelId: 2,
    title: 'Beta program',
    taxis: 2,
    hits: 25,
    checkedLevel: 2,
    recommend: true,
    groupNames: ['featured', 'home'],
    tagNames: ['beta'],
    author: 'Bob',
    addDate: '2024-02-01 08:00:00',
  },
  {
    id: 3,
    channelId: 3,
    title: 'Tech deep dive 100%',
    taxis: 1,
    hits: 5,
    checkedLevel: 1,
    hot: true,
    tagNames: ['release', 'tech'],
    author: 'ann',
    addDate: '2024-03-01 08:00:00',
  },
  {
    id: 4,
    channelId: 3,
    title: 'Tech_notes',
    taxis: 2,
    hits: 0,
    checkedLevel: 0,
    color: true,
    author: 'Cy',
    addDate: '2024-04-01 08:00:00',
    linkUrl: 'https://example.org/t',
  },
  {
    id: 5,
    channelId: 4,
    title: 'Product one',
    taxis: 1,
    hits: 100,
    checkedLevel: 2,
    top: true,
    hot: true,
    groupNames: ['home'],
    author: 'Bob',
    addDate: '2024-05-01 08:00:00',
  },
  {
    id: 6,
    channelId: 4,
    title: 'product two',
    taxis: 3,
    hits: 50,
    checkedLevel: -99,
    author: 'Dee',
    addDate: '2024-06-01 08:00:00',
  },
  {
    id: 7,
    channelId: 1,
    title: 'Welcome',
    taxis: 0,
    hits: 7,
    checkedLevel: -1,
    recommend: true,
    color: true,
    author: 'Ann',
    addDate: '2024-07-01 08:00:00',
  },
  {
    id: 8,
    channelId: 2,
    title: 'Recycled news',
    taxis: 9,
    hits: 1,
    checkedLevel: 2,
    addDate: '2024-08-01 08:00:00',
  },
  {
    id: 20,
    channelId: 11,
    title: 'Other site',
    taxis: 1,
    hits: 3,
    checkedLevel: 1,
    addDate: '2024-09-01 08:00:00',
  },
];

/** Ids in the list's default order: top desc, channelId desc, taxis desc, id desc (8 is recycled). */
export const DEFAULT_ORDER_IDS = [5, 1, 6, 4, 3, 2, 7];

export function fixtureDocument() {
  return {
    sites: [
      {
        id: 1,
        siteDir: 'main',
        siteName: 'Main site',
        isRoot: true,
        attributes: { checkContentLevel: SITE_LEVEL, pageSize: 4 },
      },
      { id: 10, siteDir: 'other', siteName: 'Other site' },
    ],
    channels: [
      { id: 1, siteId: 1, parentId: 0, channelName: 'Main site', taxis: 0 },
      {
        id: 2,
        siteId: 1,
        parentId: 1,
        channelName: 'News',
        indexName: 'news',
        taxis: 2,
        groupNames: ['top-nav'],
      },
      { id: 3, siteId: 1, parentId: 2, channelName: 'Tech', indexName: 'news-tech', taxis: 1 },
      {
        id: 4,
        siteId: 1,
        parentId: 1,
        channelName: 'Products',
        indexName: 'products',
        taxis: 1,
        linkUrl: '',
      },
      { id: 11, siteId: 10, parentId: 10, channelName: 'Other', indexName: 'news', taxis: 1 },
    ],
    contents: CONTENTS.map((content) => ({
      ...content,
      siteId: content.channelId === 11 ? 10 : 1,
      body: `<p>${content.title}</p>`,
      summary: `Summary of ${content.title}`,
    })),
  };
}

export async function loadFixture(database: Pick<DbHandle, 'db' | 'provider'>): Promise<void> {
  const { db } = database;
  await importDocument(database, fixtureDocument());
  await db.content.update({ where: { id: 8 }, data: { recycled: true, recycledDate: new Date() } });
}

/** A test app over its own database holding the fixture, and a key with these scopes. */
export async function startFixtureApp(
  scopes: Scope[] | 'all',
  options: TestAppOptions = {},
): Promise<{ app: TestApp; key: string }> {
  const app = await startTestApp(options);
  await loadFixture(app);
  return { app, key: await app.createApiKey(scopes) };
}
