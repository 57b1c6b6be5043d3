import cluster from 'node:cluster';
import { earlyWorkerCount, forkEarly } from './supervisor.ts';
import { takeWorkerV8Flags } from './v8Flags.ts';

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
  // WORKERS=0: this process serves, so it takes a worker's V8 settings.
  else takeWorkerV8Flags();
}
await import('./start.ts');
