import { describe, expect, test } from '@jest/globals';
import { sql } from '../../src/db/sql.ts';
import {
  type ContentPage,
  type ListContentsRequest,
  listContentRecords,
  listContents,
} from '../../src/domain/contents/list.ts';
import { KEPT_PAGE_BYTES } from '../../src/domain/contents/pageTexts.ts';
import { JsonText } from '../../src/domain/jsonText.ts';
import { observedStlDatabase } from '../stl/fixture.ts';

/*
 * A list page of selected fields none of which moves with views is kept as its JSON text under
 * the site's generation (src/domain/contents/pageTexts.ts): asked again, it reads the generation
 * alone and answers the same text while the generation stands. Each answer is compared with a
 * fresh client's (nothing kept), on the database the run selects; writes go through another
 * client, as another process's would. Fixture: test/stl/fixture.ts.
 */

const fixture = observedStlDatabase();
const { queries, written } = fixture;

/** The observed client's answer, the statements that read contents for it, and a fresh client's page. */
async function answer(request: ListContentsRequest) {
  queries.length = 0;
  const given = await listContents(fixture.observed, request, 1000);
  const contentReads = queries.filter((text) => /FROM "Content"/.test(text)).length;
  const page: ContentPage =
    given instanceof JsonText ? JSON.parse(given.bytes.toString('utf8')) : (given as ContentPage);
  expect(page).toEqual(await fixture.fresh((fresh) => listContentRecords(fresh, request, 1000)));
  return { given, page, contentReads };
}

describe('a page of selected fields', () => {
  const request = { siteId: 1, perPage: 3, fields: ['id', 'title', 'addDate'] } satisfies ListContentsRequest;

  test('asked again, it is the same text and reads no content while the site stands', async () => {
    const first = await answer(request);
    expect(first.given).toBeInstanceOf(JsonText);
    expect(first.contentReads).toBeGreaterThan(0);
    expect(first.page.contents.length).toBe(3);
    const again = await answer(request);
    expect(again.given).toBe(first.given);
    expect(again.contentReads).toBe(0);
  });

  test('a content written meanwhile by another client shows at once, then is kept again', async () => {
    const before = await answer(request);
    const shown = before.page.contents[0] as { id: number; title: string };
    await written(sql`UPDATE "Content" SET "title" = ${'Retitled elsewhere'} WHERE "id" = ${shown.id}`);
    const after = await answer(request);
    expect(after.given).not.toBe(before.given);
    expect(after.contentReads).toBeGreaterThan(0);
    expect(after.page.contents[0]).toMatchObject({ id: shown.id, title: 'Retitled elsewhere' });
    expect((await answer(request)).given).toBe(after.given);
  });

  test('a view, which does not advance the generation, shows in a page that selects the hits', async () => {
    const withHits = { ...request, fields: ['id', 'hits'] } satisfies ListContentsRequest;
    const before = await answer(withHits);
    expect(before.given).not.toBeInstanceOf(JsonText);
    const shown = before.page.contents[0] as { id: number; hits: number };
    // A hit as src/domain/contents/hits.ts writes it: the counters and the version only.
    await written(
      sql`UPDATE "Content" SET "hits" = "hits" + 1, "version" = "version" + 1 WHERE "id" = ${shown.id}`,
    );
    const after = await answer(withHits);
    expect(after.page.contents[0]).toEqual({ id: shown.id, hits: shown.hits + 1 });
    // The page without the hits stands through the view.
    const kept = await answer(request);
    expect(kept.given).toBeInstanceOf(JsonText);
    expect((await answer(request)).contentReads).toBe(0);
  });

  test('a page larger than the kept size is answered as records, every time', async () => {
    const large = { siteId: 1, perPage: 3, fields: ['id', 'subTitle'] } satisfies ListContentsRequest;
    const shown = (await answer(large)).page.contents[0] as { id: number };
    await written(
      sql`UPDATE "Content" SET "subTitle" = ${'x'.repeat(KEPT_PAGE_BYTES + 1)} WHERE "id" = ${shown.id}`,
    );
    for (let i = 0; i < 2; i++) {
      const read = await answer(large);
      expect(read.given).not.toBeInstanceOf(JsonText);
      expect(read.contentReads).toBeGreaterThan(0);
    }
  });

  test('whole records (form A, which carries the hit counters) are never kept as text', async () => {
    for (let i = 0; i < 2; i++) {
      const read = await answer({ siteId: 1, perPage: 3 });
      expect(read.given).not.toBeInstanceOf(JsonText);
      expect(read.contentReads).toBeGreaterThan(0);
    }
  });
});
