/*
 * Preloaded into every worker of the service by bench/timeLimits.ts (`--import`, when
 * BENCH_CPU_PROF names a directory; node refuses --cpu-prof in NODE_OPTIONS): the worker's CPU
 * profile, in pieces of 5 s, for Chrome's or VS Code's profiler.
 */
import cluster from 'node:cluster';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const directory = process.env.BENCH_CPU_PROF;
if (directory && cluster.isWorker) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  // A worker may end by a signal: the profile is written in pieces of 5 s, cpu-<pid>-<n>.cpuprofile.
  let piece = 0;
  const tick = setInterval(() => {
    session.post('Profiler.stop', (error, result) => {
      if (!error)
        writeFileSync(
          join(directory, `cpu-${process.pid}-${piece++}.cpuprofile`),
          JSON.stringify(result.profile),
        );
      session.post('Profiler.start');
    });
  }, 5000);
  tick.unref();
}
