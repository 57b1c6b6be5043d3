/*
 * Paging of the user and administrator lists. The specification says these lists never answer 400,
 * so `page` and `perPage` are read leniently: plain digits are clamped into range, anything else
 * is the default.
 */

export const DEFAULT_PAGE = 1;
export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 1000;
/** Far beyond any real list; keeps the offset a safe integer. */
const MAX_PAGE = 1_000_000;

function clamped(given: number | string | undefined, fallback: number, max: number): number {
  const text = typeof given === 'number' ? String(given) : given?.trim();
  if (text === undefined || !/^[+-]?\d+$/.test(text)) return fallback;
  return Math.min(max, Math.max(1, Number(text)));
}

export interface Paging {
  skip: number;
  take: number;
}

export function pagingOf(page: number | string | undefined, perPage: number | string | undefined): Paging {
  const take = clamped(perPage, DEFAULT_PER_PAGE, MAX_PER_PAGE);
  return { skip: (clamped(page, DEFAULT_PAGE, MAX_PAGE) - 1) * take, take };
}
