import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Db } from '../../src/db/client.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

/*
 * What the contents' triggers maintain — each content's labels, each (site, channel, review state)
 * tally, each site's generation — is what it should be after imports, whichever way the import
 * maintains it (on PostgreSQL it settles them once before its commit: src/domain/import/bulkLoad.ts),
 * into a site that already has contents and into a new one; and the writes after an import are
 * maintained by the triggers again.
 */

let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.handle.db;
});
afterAll(async () => {
  await database?.drop();
});

const contents = (siteId: number, channels: number[], count: number, from: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: from + i,
    siteId,
    channelId: channels[i % channels.length] as number,
    title: `Content ${from + i}`,
    checkedLevel: i % 2 === 0 ? 0 : 1,
    groupNames: i % 2 === 0 ? ['Home', 'featured'] : [],
    tagNames: [`tag${i % 4}`, 'Common', ''].filter((tag) => i % 5 !== 0 || tag === 'Common'),
  }));

const firstImport = {
  sites: [{ id: 1, siteDir: 'one', siteName: 'One', isRoot: true }],
  channels: [
    { id: 2, siteId: 1, parentId: 1, channelName: 'A', indexName: 'a' },
    { id: 3, siteId: 1, parentId: 2, channelName: 'B', indexName: 'b' },
  ],
  contents: contents(1, [1, 2, 3], 60, 1),
};

const secondImport = {
  sites: [{ id: 10, siteDir: 'ten', siteName: 'Ten' }],
  channels: [
    { id: 11, siteId: 10, parentId: 10, channelName: 'C', indexName: 'c' },
    { id: 4, siteId: 1, parentId: 1, channelName: 'D', indexName: 'd' },
  ],
  contents: [...contents(1, [2, 4], 45, 100), ...contents(10, [10, 11], 30, 200)],
};

/** The tallies and labels the contents call for, and the ones stored, in one order. */
async function maintained() {
  const rows = await db.content.findMany({
    select: {
      id: true,
      siteId: true,
      channelId: true,
      checked: true,
      recycled: true,
      groupNames: true,
      tagNames: true,
    },
  });
  const tallies = new Map<string, number>();
  const labels = new Set<string>();
  for (const row of rows) {
    if (!row.recycled) {
      const key = `${row.siteId}/${row.channelId}/${row.checked}`;
      tallies.set(key, (tallies.get(key) ?? 0) + 1);
    }
    for (const [kind, list] of [row.groupNames, row.tagNames].entries())
      for (const name of list.split(','))
        if (name !== '') labels.add(`${row.siteId}/${kind}/${name.toLowerCase()}/${row.id}`);
  }
  const storedTallies = await db.contentTally.findMany();
  const storedLabels = await db.contentLabel.findMany();
  return {
    expected: {
      tallies: [...tallies].map(([key, count]) => `${key}=${count}`).sort(),
      labels: [...labels].sort(),
    },
    stored: {
      // A tally emptied by deletes stays at 0: only the counted ones are compared.
      tallies: storedTallies
        .filter((tally) => tally.count !== 0)
        .map((tally) => `${tally.siteId}/${tally.channelId}/${tally.checked}=${tally.count}`)
        .sort(),
      labels: storedLabels
        .map((label) => `${label.siteId}/${label.kind}/${label.name}/${label.contentId}`)
        .sort(),
    },
  };
}

const generationOf = async (siteId: number) =>
  (await db.contentGeneration.findUnique({ where: { siteId } }))?.generation ?? 0n;

describe('an import keeps the contents labels, tallies and generations exact', () => {
  test('into a new site', async () => {
    await importDocument(database.handle, firstImport);
    const { expected, stored } = await maintained();
    expect(expected.tallies.length).toBeGreaterThan(3);
    expect(expected.labels.length).toBeGreaterThan(100);
    expect(stored).toEqual(expected);
    expect(await generationOf(1)).toBeGreaterThan(0n);
  });

  test('into a site that has contents, and a new one beside it', async () => {
    const before = await generationOf(1);
    await importDocument(database.handle, secondImport);
    const { expected, stored } = await maintained();
    expect(expected.tallies).toEqual(expect.arrayContaining(['10/11/true=15', '1/4/true=22']));
    expect(stored).toEqual(expected);
    expect(await generationOf(1)).toBeGreaterThan(before);
    expect(await generationOf(10)).toBeGreaterThan(0n);
  });

  test('a refused import changes none of them', async () => {
    const before = await maintained();
    const generation = await generationOf(1);
    const refused = { contents: [...contents(1, [2], 5, 300), { id: 1, channelId: 2, title: 'Id taken' }] };
    await expect(importDocument(database.handle, refused)).rejects.toThrow(/problem/);
    expect(await maintained()).toEqual(before);
    expect(await generationOf(1)).toBe(generation);
  });

  test('the writes after an import are maintained as they are made', async () => {
    const generation = await generationOf(1);
    await db.content.create({
      data: {
        siteId: 1,
        channelId: 3,
        title: 'Written after',
        guid: randomUUID(),
        checked: true,
        checkedLevel: 1,
        tagNames: 'late',
      },
    });
    await db.content.updateMany({ where: { id: 2 }, data: { recycled: true } });
    await db.content.deleteMany({ where: { id: 3 } });
    const { expected, stored } = await maintained();
    expect(expected.labels).toEqual(expect.arrayContaining([expect.stringMatching(/^1\/1\/late\/\d+$/)]));
    expect(stored).toEqual(expected);
    expect(await generationOf(1)).toBeGreaterThan(generation);
  });
});
