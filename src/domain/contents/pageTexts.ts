import type { DbHandle } from '../../db/client.ts';
import { sql } from '../../db/sql.ts';
import { KeptPerOwner } from '../../recentlyUsed.ts';
import { JsonText } from '../jsonText.ts';
import { isHitColumn } from './columns.ts';
import { currentGeneration } from './counts.ts';

/*
 * A list page of selected fields, kept as its JSON text under the site's generation. A page's ids
 * and total already stand while the generation does (keptPicks.ts); its rows stand too when none
 * of its columns is one a view changes: database triggers advance the generation in every
 * transaction that writes any other column of the site's contents or its channels, whoever
 * writes (counts.ts), and a hit writes only the hit counters and the version (hits.ts), which no
 * field shows. So a page asked again (a front end's table of titles, polled) reads the site's
 * generation alone and, while it is the one its text was made at, answers that text: no row is
 * read, nothing is made. A text is kept only under the generation read in the statement of its
 * rows, and only when that is still the one its ids were picked at; a page with hit counters, or
 * larger than KEPT_PAGE_BYTES, is read every time. Not shared state: every node keeps its own,
 * each checked against the database's generation.
 */

/** The kept page texts of each database client come to at most this many bytes (the least recently answered go first). */
export const KEPT_PAGE_TEXT_BYTES = 4 << 20;

/** A page whose text is longer than this is not kept. */
export const KEPT_PAGE_BYTES = 64 << 10;

interface KeptPageText {
  generation: string;
  text: JsonText<unknown>;
}

const keptTexts = new KeptPerOwner<string, KeptPageText>(
  KEPT_PAGE_TEXT_BYTES,
  (kept) => kept.text.bytes.length + 64,
);

type Reads = DbHandle['reads'];

/** Whether a page of these columns may be kept as text: no column of it moves with views. */
export function keepsPageText(columns: readonly string[]): boolean {
  return !columns.some(isHitColumn);
}

/** The site's content generation now, read alone. */
export async function generationNow(reads: Reads, siteId: number): Promise<string> {
  const [row] = await reads.prepared<{ generation: number | bigint | string }>(
    sql`SELECT ${currentGeneration(siteId)} AS "generation"`,
  );
  return String(row?.generation ?? 0);
}

/** The text kept under `key` and the generation it was made at, if there is one. */
export function keptPageText<T>(
  reads: Reads,
  key: string,
): { generation: string; text: JsonText<T> } | undefined {
  return keptTexts.of(reads).get(key) as { generation: string; text: JsonText<T> } | undefined;
}

/** At least the UTF-16 units of the records' texts, counted before any text is made. */
function unitsAtLeast(records: readonly object[], limit: number): number {
  let units = 0;
  for (const record of records) {
    for (const value of Object.values(record)) if (typeof value === 'string') units += value.length;
    if (units > limit) break;
  }
  return units;
}

/**
 * The page as JSON text, kept under `key` at `generation`; undefined (nothing made, nothing kept)
 * when it is longer than KEPT_PAGE_BYTES: such a page is answered as records, which the HTTP layer
 * streams when large (src/http/pages.ts).
 */
export function keepPageText<T extends { contents: readonly object[] }>(
  reads: Reads,
  key: string,
  generation: string,
  page: T,
): JsonText<T> | undefined {
  if (unitsAtLeast(page.contents, KEPT_PAGE_BYTES) > KEPT_PAGE_BYTES) return undefined;
  const bytes = Buffer.from(JSON.stringify(page));
  if (bytes.length > KEPT_PAGE_BYTES) return undefined;
  const text = new JsonText<T>(bytes);
  keptTexts.of(reads).set(key, { generation, text });
  return text;
}
