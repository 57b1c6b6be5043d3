import { median } from './stats.ts';

/*
 * Alternated rounds (bench/README.md, "Rounds"): a scenario's targets are measured in turn, round
 * after round (service, every floor; service, every floor; …), so that a ratio service ÷ floor is
 * read from measurements a few seconds apart rather than from runs up to a minute apart, across
 * which the shared machine's capacity drifts.
 */

/** What a round needs to be ranked or paired: its completed requests per second. */
export interface RoundRate {
  reqPerSec: number;
}

/** service ÷ a target, round by round. */
export interface RoundRatio {
  /** The median of the per-round ratios (the upper middle of an even count): the table's svc/target. */
  median: number;
  min: number;
  max: number;
  /** Each round's service req/s ÷ the target's req/s of the same round, in round order (null: none). */
  rounds: (number | null)[];
}

/**
 * Whole seconds per round: `seconds / rounds`, at least 1 and rounded up, since autocannon ends a timed
 * run on its next whole-second sample (a run of 3.4 s lasts 4, one of 0.5 s lasts 1).
 */
export function secondsPerRound(seconds: number, rounds: number): number {
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`rounds must be a whole number ≥ 1: ${rounds}`);
  if (!(seconds > 0)) throw new Error(`seconds must be above 0: ${seconds}`);
  // 1e-9: a quotient such as 0.3 / 0.1 = 2.9999999999999996 still makes 3 whole seconds, not 4.
  return Math.max(1, Math.ceil(seconds / rounds - 1e-9));
}

/**
 * The round whose req/s is the median of the target's rounds (the upper middle of an even count, as
 * `median` in stats.ts): its figures are the target's headline, all of one round, so that its p50 and
 * p99 belong to its req/s.
 */
export function medianRound<T extends RoundRate>(rounds: readonly T[]): T {
  if (rounds.length === 0) throw new Error('medianRound: no rounds');
  const sorted = [...rounds].sort((a, b) => a.reqPerSec - b.reqPerSec);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * service ÷ target from rounds taken close together: round i of the service against round i of the
 * target, then the median of those ratios (not the ratio of the medians, which would carry the drift
 * between the two medians' rounds back in). A round in which the target completed nothing has no
 * ratio (null); undefined when no round has one.
 */
export function roundRatio(
  service: readonly RoundRate[],
  target: readonly RoundRate[],
): RoundRatio | undefined {
  if (service.length !== target.length)
    throw new Error(`roundRatio: ${service.length} service rounds against ${target.length} of the target`);
  const rounds = service.map((round, i) => {
    const floor = target[i]!.reqPerSec;
    return floor > 0 ? round.reqPerSec / floor : null;
  });
  const ratios = rounds.filter((ratio) => ratio !== null);
  if (ratios.length === 0) return undefined;
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios), rounds };
}

/** One size of the default list's growth: its p50 and rate, and (rounds) its p50 over the main size's. */
export interface GrowthFigures {
  contents: number;
  p50Ms: number;
  reqPerSec: number;
  /**
   * The median of the rounds' p50 ÷ the main size's p50 in the round beside it (1 for the main size
   * itself); absent in results written before the growth was measured in rounds.
   */
  p50OverMain?: number;
}

/**
 * Each size's growth factor over the smallest: by the rounds' p50 ratios to the main size when every
 * size has them (each measured beside the main size, so the host's drift cancels), else by the p50s.
 */
export function growthFactors(growth: readonly GrowthFigures[]): number[] {
  const base = growth[0];
  if (base === undefined) return [];
  if (growth.every((g) => g.p50OverMain !== undefined && g.p50OverMain > 0))
    return growth.map((g) => g.p50OverMain! / base.p50OverMain!);
  return growth.map((g) => g.p50Ms / Math.max(base.p50Ms, 0.01));
}

/** The median of round-by-round p50 ratios, `other` ÷ `main`; undefined when no round has both. */
export function p50Ratio(
  rounds: readonly { main: { p50Ms: number }; other: { p50Ms: number } }[],
): number | undefined {
  const ratios = rounds.filter((r) => r.main.p50Ms > 0).map((r) => r.other.p50Ms / r.main.p50Ms);
  return ratios.length === 0 ? undefined : median(ratios);
}
