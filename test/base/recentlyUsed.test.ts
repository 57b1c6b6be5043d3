import { describe, expect, test } from '@jest/globals';
import { RecentlyUsed } from '../../src/recentlyUsed.ts';

/*
 * The bounded map behind every per-process memo (prepared statements, kept picks, the parser's
 * verdicts, credentials seen lately): at most `capacity` entries, the least recently used let go.
 */

const keys = <K, V>(map: RecentlyUsed<K, V>, candidates: K[]) => candidates.filter((key) => map.has(key));

describe('RecentlyUsed', () => {
  test('holds at most its capacity, letting go of the oldest first', () => {
    const map = new RecentlyUsed<string, number>(3);
    for (const [index, key] of ['a', 'b', 'c', 'd', 'e'].entries()) map.set(key, index);
    expect(map.size).toBe(3);
    expect(keys(map, ['a', 'b', 'c', 'd', 'e'])).toEqual(['c', 'd', 'e']);
    expect(map.get('e')).toBe(4);
    expect(map.get('a')).toBeUndefined();
  });

  test('an entry read is the most recent: the next one let go is another', () => {
    const map = new RecentlyUsed<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect(keys(map, ['a', 'b', 'c'])).toEqual(['a', 'c']);
  });

  test('an entry written again is the most recent, with its new value, and takes no second place', () => {
    const map = new RecentlyUsed<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 10);
    expect(map.size).toBe(2);
    map.set('c', 3);
    expect(keys(map, ['a', 'b', 'c'])).toEqual(['a', 'c']);
    expect(map.get('a')).toBe(10);
  });

  test('an undefined value is kept as a value: has tells it from an absent key', () => {
    const map = new RecentlyUsed<string, string | undefined>(2);
    map.set('allowed', undefined);
    expect(map.has('allowed')).toBe(true);
    expect(map.has('other')).toBe(false);
    expect(map.get('allowed')).toBeUndefined();
  });

  test('delete and clear', () => {
    const map = new RecentlyUsed<number, string>(4);
    map.set(1, 'one');
    map.set(2, 'two');
    map.delete(1);
    expect(keys(map, [1, 2])).toEqual([2]);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.get(2)).toBeUndefined();
  });
});
