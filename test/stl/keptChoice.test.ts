import { beforeEach, describe, expect, test } from '@jest/globals';
import { sql } from '../../src/db/sql.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { JsonText } from '../../src/domain/jsonText.ts';
import { listStlContents, type StlContentsRequest } from '../../src/domain/stl/contents.ts';
import { observedStlDatabase } from './fixture.ts';

/*
 * stl/contents keeps, per process, the site and channel it chose for a choice that names its site by
 * id (src/domain/stl/choose.ts, keptChoicesOf), and reads its next page of the same choice without
 * the choice's statement: the site's generation is read with the contents' versions, and when it
 * moved (a channel written by anyone: renamed, re-indexed, deleted) the page is read again from a
 * fresh choice. Both ways of placing a page (a kept pick, and a Hits walk that is never kept), on
 * the database the run selects; the writes go through another client, as another process's would.
 * Fixture: test/stl/fixture.ts (site 1: 11 News ── 12 Tech (index 'tech') ── 13 Deep, 14 Products).
 */

const fixture = observedStlDatabase();
const { queries, written } = fixture;

let indexed = 12;
/** Gives the index 'tech' to this channel of site 1 (the one that had it is left without one). */
async function indexTech(channelId: number): Promise<void> {
  if (channelId === indexed) return;
  await written(sql`UPDATE "Channel" SET "indexName" = NULL WHERE "id" = ${indexed}`);
  await written(sql`UPDATE "Channel" SET "indexName" = 'tech' WHERE "id" = ${channelId}`);
  indexed = channelId;
}

beforeEach(async () => {
  await indexTech(12);
});

async function page(request: StlContentsRequest) {
  queries.length = 0;
  const answer = await listStlContents(fixture.observed, request, 1000);
  const value =
    answer instanceof JsonText
      ? (JSON.parse(answer.bytes.toString()) as { value: { id: number }[] }).value
      : answer.value;
  return {
    ids: value.map(({ id }) => id),
    choices: queries.filter((text) => /FROM "Site"/.test(text)).length,
  };
}

describe.each([
  ['a kept pick', 'Default'],
  ['a Hits walk, never kept', 'Hits'],
] as const)('%s', (_way, order) => {
  const tech = { siteId: 1, channelIndex: 'tech', scope: 'Self', order } as const;

  test('a repeated page reads no choice; a channel re-indexed meanwhile is chosen afresh', async () => {
    expect(await page(tech)).toEqual({ ids: [104], choices: 1 });
    expect(await page(tech)).toEqual({ ids: [104], choices: 0 });
    await indexTech(14);
    // The kept choice (channel 12) is tried, its generation found moved, and the choice read again.
    expect(await page(tech)).toEqual({ ids: [106], choices: 1 });
    expect(await page(tech)).toEqual({ ids: [106], choices: 0 });
  });

  test('a channel deleted meanwhile is a 404, as without a kept choice', async () => {
    // Each way deletes a channel of its own: 13 (content 105) for the kept pick, 14 (106) for Hits.
    const [channelId, contentId] = order === 'Default' ? [13, 105] : [14, 106];
    const gone = { siteId: 1, channelId, scope: 'Self', order } as const;
    expect(await page(gone)).toEqual({ ids: [contentId], choices: 1 });
    expect(await page(gone)).toEqual({ ids: [contentId], choices: 0 });
    await written(sql`UPDATE "Content" SET "channelId" = 11 WHERE "channelId" = ${channelId}`);
    await written(sql`DELETE FROM "Channel" WHERE "id" = ${channelId}`);
    const failure = await page(gone).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DomainError);
    expect([(failure as DomainError).code, (failure as DomainError).message]).toEqual([
      'not-found',
      `Channel ${channelId} does not exist in site 1`,
    ]);
  });

  test('a choice that does not name its site by id is read every time', async () => {
    const root = { channelIndex: 'tech', scope: 'Self', order } as const;
    expect(await page(root)).toEqual({ ids: [104], choices: 1 });
    expect(await page(root)).toEqual({ ids: [104], choices: 1 });
  });
});
