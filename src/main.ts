import cluster from 'node:cluster';
import { setFlagsFromString } from 'node:v8';
import { earlyWorkerCount, forkEarly, WORKER_V8_FLAGS } from './supervisor.ts';

/*
 * `npm start`; src/start.ts does the work. The supervisor forks its workers first, before it loads
 * anything else: a worker's own start (node, then its modules) is the longest part of the time to
 * the first answer, and it then runs beside the supervisor's module loading and database
 * preparation instead of after them. This file imports nothing else for that reason. A worker,
 * started again from this file by node:cluster, goes straight on.
 */

if (cluster.isPrimary) {
  const workers = earlyWorkerCount();
  if (workers !== undefined) forkEarly(workers);
  // WORKERS=0: this process serves, so it takes a worker's V8 settings, before anything allocates
  // or compiles WebAssembly. The young generation's size is fixed when V8 starts, so that one flag
  // only works on the command line (docs/operating/build-and-start.md); flags given there win.
  else for (const flag of WORKER_V8_FLAGS) if (!givenOnCommandLine(flag)) setFlagsFromString(flag);
}

function givenOnCommandLine(flag: string): boolean {
  const name = flag.split('=')[0] ?? flag;
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return given.some((argument) => argument.split('=')[0] === name);
}
await import('./start.ts');
