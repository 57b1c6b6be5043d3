import type { SenderFigures } from './anonymous.ts';
import type { LoadFigures } from './load.ts';
import type { MemoryPeak } from './processes.ts';
import { type GrowthFigures, growthFactors, type RoundRatio } from './rounds.ts';
import type { ScenarioName } from './scenarios.ts';
import type { Provider } from './sql.ts';

export type TargetName = 'service' | 'A node:http' | 'B express' | 'C sql' | 'D naive sql' | 'R rows';

/** One round of a target: its figures, and in the write scenarios the readers' beside the writer's. */
export interface RoundFigures extends LoadFigures {
  reads?: LoadFigures;
}

/**
 * A target of a scenario. Its own figures (and `reads`) are those of the round with the median req/s
 * (bench/rounds.ts, `medianRound`); results written before rounds have neither `rounds` nor
 * `serviceRatio`, and their figures are the one run's.
 */
export interface Measurement extends LoadFigures {
  target: TargetName;
  /** update and create scenarios: the concurrent readers' figures beside the writer's. */
  reads?: LoadFigures;
  /** service rows: peak RSS during this scenario's measured rounds (the largest over all of them). */
  memory?: Pick<MemoryPeak, 'totalBytes' | 'workerBytes'>;
  /** Every round's figures, in the order they were measured. */
  rounds?: RoundFigures[];
  /**
   * service ÷ this target: the median of the per-round ratios, their min and max, and each round's
   * (bench/rounds.ts, `roundRatio`); absent when the target completed nothing in any round.
   */
  serviceRatio?: RoundRatio;
}

/** A target's rounds; a result written before rounds has one, the measurement itself. */
export const roundsOf = (m: Measurement): readonly RoundFigures[] => m.rounds ?? [m];

export interface ScenarioResult {
  scenario: ScenarioName;
  request: string;
  /** The correctness guard: the service and floor C (and D) give the same ids (and total). */
  guard: { ok: boolean; detail: string };
  measurements: Measurement[];
}

export interface DatabaseResult {
  provider: Provider;
  contents: number;
  importSeconds: number;
  /** `npm start` to the first answered request, on the database the import left. */
  startToFirstAnswerMs: number;
  deepPage: number;
  filteredTotal: number;
  serviceMemory: MemoryPeak;
  scenarios: ScenarioResult[];
  growth: GrowthFigures[];
  /** The default list alone, and beside hostile anonymous senders (bench/anonymous.ts). */
  anonymous: AnonymousResult;
}

export interface AnonymousResult {
  quietP50Ms: number;
  loadedP50Ms: number;
  /** loaded / quiet p50: the target is under 1.5. */
  ratio: number;
  quiet: LoadFigures;
  loaded: LoadFigures;
  senders: SenderFigures;
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
const fixed = (n: number, digits = 1) => n.toFixed(digits);

/** The width of the table's first column: the longest scenario's name and a space. */
const SCENARIO_COLUMN = 'list-fields-hits'.length + 1;

export function formatDatabase(result: DatabaseResult): string {
  const lines = [
    '',
    `== ${result.provider}: ${result.contents} contents (import ${fixed(result.importSeconds)} s, ` +
      `start to first answer ${fixed(result.startToFirstAnswerMs / 1000, 2)} s, ` +
      `filtered deep page ${result.deepPage} of ${result.filteredTotal} matches)`,
    `${'scenario'.padEnd(SCENARIO_COLUMN)}target        req/s     p50 ms  p99 ms  svc/target   (min-max)  bytes   service peak RSS (sum / worker)`,
  ];
  for (const s of result.scenarios) {
    const service = s.measurements.find((m) => m.target === 'service');
    for (const m of s.measurements) {
      // The median of the per-round ratios; a result written before rounds: the ratio of its one run.
      const ratio = m.serviceRatio
        ? fixed(m.serviceRatio.median, 2)
        : service && m.reqPerSec > 0
          ? fixed(service.reqPerSec / m.reqPerSec, 2)
          : '-';
      // How far the rounds' ratios spread (none for one round, nor for the service against itself).
      const spread =
        m.serviceRatio && m.target !== 'service' && m.serviceRatio.rounds.length > 1
          ? `${fixed(m.serviceRatio.min, 2)}-${fixed(m.serviceRatio.max, 2)}`
          : '';
      const memory = m.memory ? `${mb(m.memory.totalBytes)} / ${mb(m.memory.workerBytes)}` : '';
      const rounds = roundsOf(m);
      const byCount = rounds.filter((round) => round.byCount).length;
      const counted =
        byCount === 0
          ? ''
          : rounds.length === 1
            ? `  (by count: ${m.requests} requests)`
            : `  (by count in ${byCount} of ${rounds.length} rounds)`;
      // Failed requests of any round, not only the median one's.
      const non2xx = rounds.reduce((sum, round) => sum + round.non2xx, 0);
      const errors = rounds.reduce((sum, round) => sum + round.errors, 0);
      const bad = non2xx + errors > 0 ? `  !! ${non2xx} non-2xx, ${errors} errors` : '';
      lines.push(
        `${(m === s.measurements[0] ? s.scenario : '').padEnd(SCENARIO_COLUMN)}${m.target.padEnd(13)}` +
          `${fixed(m.reqPerSec).padStart(8)}${fixed(m.p50Ms).padStart(10)}${fixed(m.p99Ms).padStart(8)}` +
          `${ratio.padStart(12)}${spread.padStart(12)}${String(m.bytesPerResponse).padStart(7)}   ` +
          `${memory}${counted}${bad}`,
      );
      if (m.reads) {
        lines.push(
          `${''.padEnd(SCENARIO_COLUMN)}${'  + reads'.padEnd(13)}${fixed(m.reads.reqPerSec).padStart(8)}` +
            `${fixed(m.reads.p50Ms).padStart(10)}${fixed(m.reads.p99Ms).padStart(8)}`,
        );
      }
    }
    lines.push(`${''.padEnd(SCENARIO_COLUMN)}guard: ${s.guard.ok ? 'ok' : 'MISMATCH'} (${s.guard.detail})`);
  }
  lines.push(
    `service peak RSS over the run: ${mb(result.serviceMemory.totalBytes)} in all, ` +
      `${mb(result.serviceMemory.workerBytes)} per worker; processes: ` +
      result.serviceMemory.processes
        .map((p) => `${p.name}${p.worker ? '*' : ''} ${mb(p.rssBytes)}`)
        .join(', '),
  );
  if (result.growth.length > 1) {
    const factors = growthFactors(result.growth);
    lines.push(
      `default list p50 growth: ${result.growth
        .map((g, i) => `${g.contents}: ${fixed(g.p50Ms)} ms (x${fixed(factors[i]!, 2)})`)
        .join(' -> ')}`,
    );
  }
  const { anonymous } = result;
  const answers = Object.entries(anonymous.senders.statuses)
    .map(([status, count]) => `${status} x${count}`)
    .join(', ');
  lines.push(
    `default list beside ${anonymous.senders.senders} hostile anonymous senders ` +
      `(${mb(anonymous.senders.bodyBytes)} bodies of ${anonymous.senders.keys} keys): p50 ` +
      `${fixed(anonymous.quietP50Ms)} ms quiet, ${fixed(anonymous.loadedP50Ms)} ms with them ` +
      `(x${fixed(anonymous.ratio, 2)}; target < 1.5); their answers: ${answers || 'none'}, ` +
      `${anonymous.senders.cutOff} cut off unread`,
  );
  return lines.join('\n');
}
