import type { Content } from '../../db/models.ts';
import { KeptPerOwner } from '../../recentlyUsed.ts';
import { STREAM_AFTER_BYTES } from '../longWork.ts';
import { type Placed, type RowColumns, rowsWhole, type TextReader } from './list.ts';

/*
 * A template-tag page is read again and again (every view of a page that shows it), and once its
 * ids are picked most of its cost is making its records: the driver's values of every column of
 * each row, the form, the JSON text (bench/RUNTIME.md, "Template-tag pages from kept texts"). Each
 * process keeps the JSON text of the records it answered, by form (or field selection) and id,
 * with what the text stands for: the row's version and hits as read before it, and the site's
 * generation read before those. A kept text is answered again while all three are unchanged:
 * database triggers advance the generation in every transaction that writes any other column of
 * the site's contents, whoever writes (counts.ts); a write of the hit counters alone does not
 * (hits.ts), and the hits are compared themselves. The version catches the service's own writes
 * between the generation's read and the row's. So a page reads its contents' id, version and hits
 * (placedInOrder, placedPicked), then the rows of only those whose kept text does not stand.
 * A text is never older than what it is kept under: everything it is compared by is read first.
 */

/** The kept texts of each database client come to at most this many UTF-16 units (the least recently answered go first). */
export const KEPT_TEXT_UNITS = 2 << 20;

/** A record whose text is longer than this is not kept: its page is answered as records (below). */
export const KEPT_RECORD_UNITS = 16 << 10;

interface KeptText {
  version: number;
  hits: number;
  generation: string;
  text: string;
}

/** The text, and what its key and fields hold besides. */
const weightOf = (kept: KeptText) => kept.text.length + 64;

const keptTexts = new KeptPerOwner<string, KeptText>(KEPT_TEXT_UNITS, weightOf);

/**
 * A page's records: the texts of all of them, or, when one is longer than KEPT_RECORD_UNITS or
 * they add up to more than STREAM_AFTER_BYTES, the records themselves, which the HTTP layer
 * streams record by record (src/http/pages.ts) as it would any page that large.
 */
export type PageRecords<R> = { texts: string[] } | { records: R[] };

/**
 * The records of these contents, in this order, from the kept texts that still stand for them and
 * from the rows (`columns`) of the others, made by `record`; `kind` names the form or selection.
 * A content deleted since it was placed is left out.
 */
export async function pageRecords<R>(
  database: TextReader,
  placed: readonly Placed[],
  generation: string,
  kind: string,
  columns: RowColumns,
  record: (row: Content) => R,
): Promise<PageRecords<R>> {
  const kept = keptTexts.of(database.reads);
  const standing = placed.map(({ id, version, hits }) => {
    const text = kept.get(`${kind}:${id}`);
    return text?.version === version && text.hits === hits && text.generation === generation
      ? text.text
      : undefined;
  });
  const missing = placed.filter((_, index) => standing[index] === undefined).map(({ id }) => id);
  const rows = missing.length === 0 ? undefined : await rowsWhole(database, missing, columns);
  const page: { text: string; made?: R }[] = [];
  let units = 0;
  let asRecords = false;
  for (const [index, { id, version, hits }] of placed.entries()) {
    const found = standing[index];
    if (found !== undefined) {
      page.push({ text: found });
      units += found.length;
      continue;
    }
    const row = rows?.get(id);
    if (row === undefined) continue;
    const made = record(row);
    const text = JSON.stringify(made);
    if (text.length <= KEPT_RECORD_UNITS) kept.set(`${kind}:${id}`, { version, hits, generation, text });
    else asRecords = true;
    page.push({ text, made });
    units += text.length;
  }
  if (!asRecords && units <= STREAM_AFTER_BYTES) return { texts: page.map(({ text }) => text) };
  return { records: page.map(({ text, made }) => made ?? (JSON.parse(text) as R)) };
}
