import cliProgress from 'cli-progress';

/*
 * Progress of a long command on stderr: a bar with rate and time left on a terminal (cli-progress),
 * and plain lines every few seconds when stderr is a file or a pipe (logs, CI), where a redrawn
 * bar would be noise. stdout stays for the command's result.
 */

export interface ProgressTarget {
  /** The terminal stream, when stderr is one. */
  tty?: NodeJS.WriteStream | undefined;
  /** Writes one line to stderr. */
  line(text: string): void;
}

export interface Progress {
  /** Starts a phase: `unit` is 'bytes' (shown in MB) or a noun for counted things. */
  phase(label: string, total: number | undefined, unit: string): void;
  update(done: number): void;
  /** Ends the current phase with a closing line: "done" only when the phase completed. */
  end(completed?: boolean): void;
}

/** Seconds between two plain lines. */
const LINE_INTERVAL_MS = 5000;

const MB = 1024 * 1024;

function amount(value: number, unit: string): string {
  return unit === 'bytes' ? `${(value / MB).toFixed(1)} MB` : `${value.toLocaleString('en-US')} ${unit}`;
}

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

export function createProgress(target: ProgressTarget, now: () => number = Date.now): Progress {
  let label = '';
  let unit = '';
  let total: number | undefined;
  let done = 0;
  let started = 0;
  let lastLine = 0;
  let bar: cliProgress.SingleBar | undefined;

  const rate = () => {
    const elapsed = (now() - started) / 1000;
    return elapsed > 0 ? done / elapsed : 0;
  };
  const rateText = () => `${amount(Math.round(rate()), unit)}/s`;
  const payload = () => ({
    label,
    amount: total === undefined ? amount(done, unit) : `${amount(done, unit)} of ${amount(total, unit)}`,
    rate: rateText(),
  });

  return {
    phase(name, phaseTotal, phaseUnit) {
      label = name;
      unit = phaseUnit;
      total = phaseTotal;
      done = 0;
      started = now();
      lastLine = started;
      if (target.tty) {
        bar = new cliProgress.SingleBar(
          {
            stream: target.tty,
            format: '{label} [{bar}] {percentage}% | {amount} | {rate} | ETA {eta_formatted}',
            hideCursor: true,
            etaBuffer: 50,
            fps: 5,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(Math.max(phaseTotal ?? 0, 1), 0, payload());
      } else {
        target.line(`${label}: started${total === undefined ? '' : `, ${amount(total, unit)}`}`);
      }
    },
    update(value) {
      done = value;
      if (bar) {
        bar.update(Math.min(value, total ?? value), payload());
        return;
      }
      const time = now();
      if (time - lastLine < LINE_INTERVAL_MS) return;
      lastLine = time;
      const left =
        total !== undefined && done > 0 && rate() > 0
          ? `, ${Math.floor((done / total) * 100)}%, about ${seconds(((total - done) / rate()) * 1000)} left`
          : '';
      target.line(`${label}: ${payload().amount}, ${rateText()}${left}`);
    },
    end(completed = true) {
      if (bar) {
        if (completed) bar.update(total ?? done, payload());
        bar.stop();
        bar = undefined;
      }
      target.line(
        completed
          ? `${label}: done, ${amount(done, unit)} in ${seconds(now() - started)}`
          : `${label}: stopped after ${seconds(now() - started)}, nothing kept`,
      );
    },
  };
}

/**
 * Follows a command's progress events, each naming its phase: a new phase ends the one before and
 * starts its own display; `finish` ends the last, as done only when the command succeeded (a failed
 * import must not say "done" for a phase whose work was thrown away).
 */
export function followPhases<P extends string>(
  progress: Progress,
  phases: Record<P, { label: string; unit: string }>,
): {
  onProgress(event: { phase: P; done: number; total: number | undefined }): void;
  finish(completed: boolean): void;
} {
  let current: P | undefined;
  return {
    onProgress(event) {
      if (event.phase !== current) {
        if (current !== undefined) progress.end();
        current = event.phase;
        progress.phase(phases[current].label, event.total, phases[current].unit);
      }
      progress.update(event.done);
    },
    finish(completed) {
      if (current !== undefined) progress.end(completed);
    },
  };
}
