import { afterAll, beforeAll } from '@jest/globals';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import type { Sql } from '../../src/db/sql.ts';
import { formatDateTime } from '../../src/domain/dates.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

/*
 * A catalogue for the template-tag reads, every value chosen so that each tag attribute selects a
 * known list of ids in a known order. Site level 1 (the default): checkedLevel 1 is approved.
 *
 * Site 1 'main' (root):  1 ─┬─ 11 News ── 12 Tech ── 13 Deep
 *                           ├─ 14 Products
 *                           └─ 15 News (a second channel of that name)
 * Site 2 'en/News':      2 ── 21 News
 * Site 3 'archive':      3 (taxis −1: first in the site list)
 *
 * Approved contents of site 1, outside the recycle bin: 101 102 104 105 106 108 110.
 * 103 is pending, 107 is recycled, 109 belongs to site 2.
 */

const DAY = 24 * 60 * 60 * 1000;

export function stlDocument(now: Date) {
  const recent = formatDateTime(new Date(now.getTime() - 2 * DAY));
  const content = (
    id: number,
    channelId: number,
    fields: Record<string, unknown> & { addDate: string; lastModifiedDate?: string },
  ) => ({
    id,
    channelId,
    checkedLevel: 1,
    title: `Content ${id}`,
    lastModifiedDate: fields.addDate,
    ...fields,
  });
  return {
    sites: [
      {
        id: 1,
        siteDir: 'main',
        siteName: 'Main site',
        isRoot: true,
        attributes: {
          configUploadImageIsTitleImage: 'false',
          configUploadImageTitleImageWidth: '640',
          pageSize: 12,
          isWaterMark: true,
          createStaticContentAddDate: '2024-05-01 10:00:00',
          imageUploadTypeCollection: 'jpg|png',
          fileUploadTypeCollection: 'zip,pdf',
        },
      },
      { id: 2, siteDir: 'en/News', siteName: 'English news', taxis: 5 },
      { id: 3, siteDir: 'archive', siteName: 'Archive', taxis: -1 },
    ],
    channels: [
      { id: 1, siteId: 1, parentId: 0, channelName: 'Main site' },
      {
        id: 11,
        siteId: 1,
        parentId: 1,
        channelName: 'News',
        indexName: 'news',
        taxis: 1,
        groupNames: ['top', 'nav'],
        addDate: '2024-01-15 10:00:00',
        keywords: 'news,press',
      },
      { id: 12, siteId: 1, parentId: 11, channelName: 'Tech', indexName: 'tech', taxis: 1 },
      { id: 13, siteId: 1, parentId: 12, channelName: 'Deep', taxis: 1 },
      {
        id: 14,
        siteId: 1,
        parentId: 1,
        channelName: 'Products',
        indexName: 'products',
        taxis: 2,
        isChannelAddable: false,
        transType: 2,
        transIsAutomatic: true,
        contentAttributesOfDisplay: 'Title,Hits',
        createChannelIdsIfContentChanged: [1, 14],
        defaultTaxisType: 'OrderByTaxis',
      },
      { id: 15, siteId: 1, parentId: 1, channelName: 'News', taxis: 3 },
      { id: 21, siteId: 2, parentId: 2, channelName: 'News', indexName: 'news', taxis: 1 },
    ],
    contents: [
      content(101, 11, {
        taxis: 1,
        hits: 10,
        top: true,
        groupNames: ['a'],
        tagNames: ['x'],
        addDate: '2024-01-01 08:00:00',
        lastModifiedDate: '2024-06-01 08:00:00',
      }),
      content(102, 11, {
        taxis: 2,
        hits: 30,
        recommend: true,
        groupNames: ['b'],
        tagNames: ['y'],
        addDate: '2024-03-01 08:00:00',
        lastModifiedDate: '2024-02-01 08:00:00',
      }),
      content(103, 11, { taxis: 3, hits: 99, checkedLevel: 0, addDate: '2024-03-02 08:00:00' }),
      content(104, 12, {
        taxis: 1,
        hits: 20,
        hot: true,
        groupNames: ['a', 'b'],
        tagNames: ['x', 'y'],
        addDate: '2024-02-01 08:00:00',
        lastModifiedDate: '2024-07-01 08:00:00',
        addUserName: 'admin',
        lastEditUserName: 'editor',
        lastEditDate: '2024-07-01 08:00:00',
        summary: 'Sum & more',
        author: 'Ann',
        linkUrl: 'https://example.org/104',
      }),
      content(105, 13, { taxis: 1, hits: 5, color: true, addDate: '2024-04-01 08:00:00' }),
      content(106, 14, { taxis: 1, hits: 50, top: true, addDate: '2024-05-01 08:00:00' }),
      content(107, 11, { taxis: 9, hits: 3, addDate: '2024-05-02 08:00:00' }),
      content(108, 1, { taxis: 1, hits: 1, addDate: '2023-12-01 08:00:00' }),
      content(109, 21, { taxis: 1, hits: 2, addDate: '2024-01-01 08:00:00' }),
      content(110, 11, { taxis: 4, hits: 0, addDate: recent }),
    ],
  };
}

export async function loadStlFixture(database: Pick<DbHandle, 'db' | 'provider'>, now: Date): Promise<void> {
  const { db } = database;
  await importDocument(database, stlDocument(now));
  await db.content.update({ where: { id: 107 }, data: { recycled: true, recycledDate: new Date() } });
}

export interface ObservedStlDatabase {
  /** The database, with the catalogue, and the test's own client (for the writes of "another process"). */
  database: TestDatabase;
  /** A second client on it, whose statements' texts are recorded in `queries`. */
  observed: DbHandle;
  queries: string[];
  /** Another process's write: through the test's own client, never the observed one. */
  written(statement: Sql): Promise<number>;
  /** What `read` answers on a fresh client of the database (nothing kept), closed after. */
  fresh<T>(read: (handle: DbHandle) => Promise<T>): Promise<T>;
}

/**
 * The catalogue on a database of its own for the calling test file, with an observed client beside
 * it (hooks registered here; `prepare` runs on the test's client before the observed one connects).
 */
export function observedStlDatabase(prepare?: (handle: DbHandle) => Promise<unknown>): ObservedStlDatabase {
  const fixture = {
    queries: [] as string[],
    written: (statement: Sql) => fixture.database.handle.db.$executeRaw(statement),
    async fresh<T>(read: (handle: DbHandle) => Promise<T>): Promise<T> {
      const client = await createDb(fixture.database.url);
      try {
        return await read(client);
      } finally {
        await client.db.$disconnect();
      }
    },
  } as ObservedStlDatabase;
  beforeAll(async () => {
    fixture.database = await createTestDatabase();
    await loadStlFixture(fixture.database.handle, new Date());
    await prepare?.(fixture.database.handle);
    fixture.observed = await createDb(fixture.database.url, {
      onQuery: (text) => fixture.queries.push(text),
    });
  });
  afterAll(async () => {
    await fixture.observed?.db.$disconnect();
    await fixture.database?.drop();
  });
  return fixture;
}
