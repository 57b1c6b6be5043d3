/*
 * Preloaded into every process of the service by bench/timeLimits.ts (`--import`, when
 * BENCH_LOOP_DELAY names a directory): the event loop's delays as perf_hooks measures them, and
 * every block of the loop over 50 ms, written every second (a worker may end by a signal), so that
 * a benchmark can tell a worker's own blocks from the waits of its clients.
 */
import cluster from 'node:cluster';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const directory = process.env.BENCH_LOOP_DELAY;
if (directory && cluster.isWorker) {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const blocks = [];
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  const tick = setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage();
    // [when the block began (epoch ms), how long the timer was late, the process's CPU time meanwhile]:
    // a block with little CPU time is the machine's wait, not the worker's work.
    if (now - last > 60)
      blocks.push([
        Math.round(performance.timeOrigin + last),
        Math.round(now - last - 10),
        Math.round((cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000),
      ]);
    last = now;
    lastCpu = cpu;
  }, 10);
  tick.unref();
  const write = () => {
    const ms = (ns) => Math.round(ns / 1e4) / 100;
    writeFileSync(
      join(directory, `loop-${process.pid}.json`),
      JSON.stringify({
        pid: process.pid,
        p50: ms(histogram.percentile(50)),
        p99: ms(histogram.percentile(99)),
        max: ms(histogram.max),
        blocks,
      }),
    );
  };
  setInterval(write, 1000).unref();
  process.on('exit', write);
}

/*
 * BENCH_CPU_PROF=<directory>: a CPU profile of each worker's whole life, written when it exits
 * (node refuses --cpu-prof in NODE_OPTIONS; the inspector module does the same from inside).
 */
const profiles = process.env.BENCH_CPU_PROF;
if (profiles && cluster.isWorker) {
  const { Session } = await import('node:inspector');
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (error, result) => {
      if (!error)
        writeFileSync(join(profiles, `worker-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
