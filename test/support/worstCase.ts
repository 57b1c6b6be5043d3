/*
 * Data and a content filter shaped for the worst case of the time limits
 * (docs/security/time-limits.md), shared by test/contents/timeLimit.test.ts and
 * bench/timeLimits.ts: every text column long, and 20 long Like/NotLike patterns over every text
 * column — the shapes that cost LIKE text length × pattern length, and the `_`-between-literals
 * shape that costs any matcher that much. Every rule holds on every row (texts of `a` ending in
 * `b`), so no database can skip one.
 */

export const TEXT_COLUMNS = [
  'title',
  'subTitle',
  'imageUrl',
  'videoUrl',
  'fileUrl',
  'body',
  'summary',
  'author',
  'source',
  'linkUrl',
  'addUserName',
  'lastEditUserName',
  'writingUserName',
] as const;

const SHAPES = [
  { operator: 'Like', value: `%${'a_'.repeat(498)}b%` },
  { operator: 'NotLike', value: `%${'a'.repeat(997)}c%` },
  { operator: 'Like', value: `%${'a%'.repeat(499)}b` },
] as const;

/** The 20 rules (the contract's most), each of the shapes in turn, over every text column. */
export const WORST_CASE_WHERES = Array.from({ length: 20 }, (_, index) => ({
  column: TEXT_COLUMNS[index % TEXT_COLUMNS.length] as string,
  ...(SHAPES[index % SHAPES.length] as (typeof SHAPES)[number]),
}));

/** A content's text columns for the worst case: 4 MB of body, 200 KB elsewhere (past the contract's limits). */
export function worstCaseTexts(): Record<string, string> {
  const long = `${'a'.repeat(200_000)}b`;
  return {
    ...Object.fromEntries(TEXT_COLUMNS.map((column) => [column, long])),
    body: `${'a'.repeat(4_000_000)}b`,
  };
}
