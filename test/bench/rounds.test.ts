import { describe, expect, test } from '@jest/globals';
import { growthFactors, medianRound, p50Ratio, roundRatio, secondsPerRound } from '../../bench/rounds.ts';

/*
 * The benchmark's alternated rounds (bench/rounds.ts): the ratio service ÷ floor is the median of the
 * per-round ratios, which cancels a drift of the machine that a ratio of medians keeps.
 */

const rates = (...reqPerSec: number[]) => reqPerSec.map((r) => ({ reqPerSec: r }));

describe('roundRatio', () => {
  test('is the median of the per-round ratios, not the ratio of the medians', () => {
    // The machine slows down by half from round to round; the service is 0.8 of the floor throughout.
    const floor = rates(20000, 10000, 5000);
    const service = rates(16000, 8000, 4000);
    expect(roundRatio(service, floor)).toEqual({ median: 0.8, min: 0.8, max: 0.8, rounds: [0.8, 0.8, 0.8] });
    // The same figures in another order of rounds give other ratios: rounds are paired by index.
    const paired = roundRatio(rates(4000, 8000, 16000), floor)!;
    expect(paired.rounds).toEqual([0.2, 0.8, 3.2]);
    expect(paired.median).toBe(0.8);
    expect(paired.min).toBe(0.2);
    expect(paired.max).toBe(3.2);
    // Medians from different rounds: their ratio would be 11000 / 12000 = 0.917; the rounds' is 0.8.
    expect(roundRatio(rates(11000, 16000, 9000), rates(10000, 20000, 12000))).toEqual({
      median: 0.8,
      min: 0.75,
      max: 1.1,
      rounds: [1.1, 0.8, 0.75],
    });
  });

  test('keeps the spread and takes the upper middle of an even count', () => {
    const ratio = roundRatio(rates(900, 1000, 1100, 1000), rates(1000, 1000, 1000, 1000))!;
    expect(ratio.rounds).toEqual([0.9, 1, 1.1, 1]);
    expect(ratio.median).toBe(1);
    expect(ratio.min).toBe(0.9);
    expect(ratio.max).toBe(1.1);
    expect(roundRatio(rates(900, 1100), rates(1000, 1000))!.median).toBe(1.1);
  });

  test('leaves out rounds in which the target completed nothing', () => {
    expect(roundRatio(rates(500, 600, 700), rates(1000, 0, 1000))).toEqual({
      median: 0.7,
      min: 0.5,
      max: 0.7,
      rounds: [0.5, null, 0.7],
    });
    expect(roundRatio(rates(500), rates(0))).toBeUndefined();
  });

  test('refuses rounds that do not pair up', () => {
    expect(() => roundRatio(rates(1, 2), rates(1))).toThrow('2 service rounds against 1');
  });
});

describe('medianRound', () => {
  test('is the round with the median req/s, whole (its latencies belong to its rate)', () => {
    const rounds = [
      { reqPerSec: 300, p50Ms: 3 },
      { reqPerSec: 100, p50Ms: 9 },
      { reqPerSec: 200, p50Ms: 5 },
    ];
    expect(medianRound(rounds)).toBe(rounds[2]);
    expect(medianRound([rounds[0]!, rounds[1]!])).toBe(rounds[0]);
    expect(medianRound([rounds[1]!])).toBe(rounds[1]);
    expect(() => medianRound([])).toThrow('no rounds');
  });
});

describe('secondsPerRound', () => {
  test('splits the seconds into whole seconds of at least one, rounded up', () => {
    expect(secondsPerRound(6, 3)).toBe(2);
    expect(secondsPerRound(10, 3)).toBe(4);
    expect(secondsPerRound(9, 3)).toBe(3);
    expect(secondsPerRound(0.5, 1)).toBe(1);
    expect(secondsPerRound(2, 5)).toBe(1);
    // (0.1 + 0.2) * 10 is 3.0000000000000004: three seconds, not four.
    expect(secondsPerRound((0.1 + 0.2) * 10, 1)).toBe(3);
  });

  test('refuses rounds that are not a whole number of at least one, and no time', () => {
    expect(() => secondsPerRound(10, 0)).toThrow('rounds');
    expect(() => secondsPerRound(10, 1.5)).toThrow('rounds');
    expect(() => secondsPerRound(10, Number.NaN)).toThrow('rounds');
    expect(() => secondsPerRound(0, 3)).toThrow('seconds');
    expect(() => secondsPerRound(Number.NaN, 3)).toThrow('seconds');
  });
});

describe('the growth, measured beside the main size', () => {
  test('a p50 ratio is the median of the rounds’ own ratios', () => {
    const round = (other: number, main: number) => ({ other: { p50Ms: other }, main: { p50Ms: main } });
    // Per round 0.5, 1.0, 0.6: the median 0.6, where the medians' ratio would be 20 / 30 = 0.67.
    expect(p50Ratio([round(10, 20), round(30, 30), round(21, 35)])).toBeCloseTo(0.6, 10);
    expect(p50Ratio([round(10, 0)])).toBeUndefined();
  });

  test('factors over the smallest size come from the ratios to the main size when every size has one', () => {
    const sizes = [
      { contents: 10000, p50Ms: 15, reqPerSec: 600, p50OverMain: 0.8 },
      { contents: 100000, p50Ms: 29, reqPerSec: 300, p50OverMain: 1 },
      { contents: 1000000, p50Ms: 20, reqPerSec: 450, p50OverMain: 1.2 },
    ];
    const factors = growthFactors(sizes);
    expect(factors.map((f) => Number(f.toFixed(3)))).toEqual([1, 1.25, 1.5]);
    // Results written before: by the p50s, as they were.
    const before = growthFactors(sizes.map(({ p50OverMain: _, ...rest }) => rest));
    expect(before.map((f) => Number(f.toFixed(3)))).toEqual([1, 1.933, 1.333]);
    expect(growthFactors([])).toEqual([]);
  });
});
