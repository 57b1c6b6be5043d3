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

  test('the newest entry read again and again stays the newest; a let-go key comes back only as the newest', () => {
    const map = new RecentlyUsed<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    for (let i = 0; i < 3; i++) expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect(keys(map, ['a', 'b', 'c'])).toEqual(['a', 'c']);
    map.delete('c');
    map.set('d', 4);
    expect(map.get('a')).toBe(1);
    expect(map.get('a')).toBe(1);
    map.set('e', 5);
    expect(keys(map, ['a', 'd', 'e'])).toEqual(['a', 'e']);
    // An entry that alone outweighs the capacity is let go at once, and is no one's newest.
    const heavy = new RecentlyUsed<string, number>(5, (value) => value);
    heavy.set('small', 2);
    heavy.set('huge', 9);
    expect(keys(heavy, ['small', 'huge'])).toEqual([]);
    heavy.set('x', 1);
    heavy.set('y', 1);
    expect(heavy.get('x')).toBe(1);
    heavy.set('z', 4);
    expect(keys(heavy, ['x', 'y', 'z'])).toEqual(['x', 'z']);
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

  test('by weight: the entries weigh at most the capacity together, the oldest let go first', () => {
    const map = new RecentlyUsed<string, string>(10, (text) => text.length);
    map.set('a', 'xxxx');
    map.set('b', 'yyyy');
    map.set('c', 'zz');
    expect(keys(map, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
    // 4 + 4 + 2 + 3 = 13: a goes, 9 stay.
    map.set('d', 'www');
    expect(keys(map, ['a', 'b', 'c', 'd'])).toEqual(['b', 'c', 'd']);
    // b written again, lighter: its old weight is given back, nothing else goes (1 + 2 + 3).
    map.set('b', 'y');
    map.set('e', 'vvvv');
    expect(keys(map, ['b', 'c', 'd', 'e'])).toEqual(['b', 'c', 'd', 'e']);
    map.delete('c');
    map.set('f', 'uu');
    expect(keys(map, ['b', 'd', 'e', 'f'])).toEqual(['b', 'd', 'e', 'f']);
    // One heavier than the whole capacity is not kept, and takes nothing with it but the rest.
    map.set('g', 'x'.repeat(11));
    expect(map.size).toBe(0);
    map.set('h', 'x'.repeat(10));
    expect(keys(map, ['h'])).toEqual(['h']);
  });
});
