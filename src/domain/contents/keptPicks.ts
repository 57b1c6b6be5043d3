import type { Sql } from '../../db/sql.ts';
import { KeptPerOwner, type RecentlyUsed } from '../../recentlyUsed.ts';
import { typedValues } from './counts.ts';

/*
 * A list page's ids and total (and other answers made only of the site's contents and channels,
 * such as stl/contents' plan), kept in this process under the site's data generation. Database
 * triggers advance a site's ContentGeneration inside every transaction that writes its contents or
 * its channels (counts.ts), whoever writes; views alone do not, so a filter or order that reads the
 * hit counters is never kept. Which contents a page holds, in which order, and how many match
 * depend on nothing else: while the generation read before the pick is still the site's, the pick
 * is still the answer, and a repeated page (a front end's first page, polled) costs neither the
 * index walk nor the total. The rows themselves are always read afresh (their hit counters move).
 * Not shared state: every node keeps its own, each checked against the database's generation.
 */

export interface Picked {
  ids: number[];
  totalCount: number;
}

/** Picks kept per owner (a database client's reads), the least recently used let go first. */
export const KEPT_PICKS = 512;

/** A filter whose key is longer than this (long In lists) is picked every time, not kept. */
const KEY_CHARACTERS = 4096;

interface KeptPick {
  generation: string;
  picked: unknown;
}

const keptPicks = new KeptPerOwner<string, KeptPick>(KEPT_PICKS);

/**
 * What a pick is kept under: what it is (`kind`), and the texts and typed values (1 and '1' differ)
 * of its statements' parts, with any other number that decides it (a window).
 */
export function pickKey(
  kind: string,
  parts: readonly Sql[],
  numbers: readonly number[] = [],
): string | undefined {
  const key = JSON.stringify([kind, ...parts.map((part) => [part.sql, typedValues(part)]), numbers]);
  return key.length <= KEY_CHARACTERS ? key : undefined;
}

/**
 * The pick kept under `key` for `generation`, if there is one; nothing is picked or kept. For a
 * generation the caller has not read but will check afterwards: a pick made under such a
 * generation could be filed under one older than itself.
 */
export function keptPickIfAny<T>(owner: object, key: string | undefined, generation: string): T | undefined {
  const found = key === undefined ? undefined : keptPicks.of(owner).get(key);
  return found?.generation === generation ? (found.picked as T) : undefined;
}

/**
 * The pick kept under `key` while the site is at `generation` (read before the pick, so that a pick
 * kept is never older than its generation), else `pick()` kept under it.
 */
export async function keptPick<T>(
  owner: object,
  key: string | undefined,
  generation: string,
  pick: () => Promise<T>,
): Promise<T> {
  if (key === undefined) return pick();
  const kept = keptPicks.of(owner);
  const found = kept.get(key);
  if (found?.generation === generation) return found.picked as T;
  const picked = await pick();
  kept.set(key, { generation, picked });
  return picked;
}

/**
 * A page read at its place (what it reads of its site and channel before its pick, with the site's
 * generation): at the place this process kept under `key` when there is one, `page` checking it
 * against the generation it reads with its rows (`unchecked`, undefined when that moved); else at a
 * fresh `read()` of the place, kept for the next page. No key: the place is read every time.
 */
export async function atKeptPlace<P, R>(
  kept: RecentlyUsed<string, P>,
  key: string | undefined,
  read: () => Promise<P>,
  page: (place: P, unchecked: boolean) => Promise<R | undefined>,
): Promise<R> {
  const known = key === undefined ? undefined : kept.get(key);
  if (key !== undefined && known !== undefined) {
    const answer = await page(known, true);
    if (answer !== undefined) return answer;
    kept.delete(key);
  }
  const place = await read();
  if (key !== undefined) kept.set(key, place);
  const answer = await page(place, false);
  if (answer === undefined) throw new Error('A page read at a place read now gave no answer');
  return answer;
}
