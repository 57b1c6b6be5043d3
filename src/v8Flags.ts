import { setFlagsFromString } from 'node:v8';

/*
 * The V8 settings a process that serves or imports runs with. Imports nothing else: the entries
 * (src/main.ts, src/cli/main.ts) take the settings before they load anything that allocates much.
 */

/**
 * V8 settings of every worker, measured to cut a worker's resident memory (bench/RUNTIME.md,
 * "Memory: Prisma's small query compiler"): a small young generation (the service's request garbage
 * is short-lived and small; the default lets it grow several times larger); Prisma's query-compiler
 * WebAssembly compiled function by function as it is first called, once, by the baseline compiler,
 * instead of all of it up front and again by the optimising compiler; and an old generation allowed
 * to grow by 30 % over what the last full collection kept before the next one (V8's own factor lets
 * it double or more under load, and the peak is then garbage; the price is more full collections).
 * It is a growth factor, not a cap: a large request (an import) still gets the memory it needs.
 * Flags the operator passes to node (e.g. in NODE_OPTIONS or on the command line) come after these
 * and win: `node --heap-growing-percent=0 dist/src/main.js` gives the workers V8's own factor back.
 * The supervisor gives them to its workers (src/supervisor.ts); a process that does the work itself —
 * the service with WORKERS=0, the CLI — takes them as it starts (takeWorkerV8Flags).
 */
export const WORKER_V8_FLAGS = [
  '--max-semi-space-size=4',
  '--wasm-lazy-compilation',
  '--no-wasm-tier-up',
  '--heap-growing-percent=30',
];

/**
 * Gives this process the worker settings it can still take, before anything allocates or compiles
 * WebAssembly: every one but the young generation's size, which V8 fixes when it starts (so that
 * one works only on the command line, docs/operating/build-and-start.md). Flags given on the command
 * line or in NODE_OPTIONS win.
 */
export function takeWorkerV8Flags(): void {
  for (const flag of flagsToTake(process.execArgv, process.env.NODE_OPTIONS)) setFlagsFromString(flag);
}

/** The worker settings not given on the command line (execArgv) or in NODE_OPTIONS, which win. */
export function flagsToTake(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = new Set([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map(nameOf));
  return WORKER_V8_FLAGS.filter((flag) => !given.has(nameOf(flag)));
}

/** A flag's name: `--heap-growing-percent` of `--heap-growing-percent=30`. */
const nameOf = (flag: string) => flag.split('=')[0] ?? flag;
