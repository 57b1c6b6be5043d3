/**
 * What carrying a costly read to another executor costs the serving process (issue 20 §3: the costly
 * reads' thread is a V8 isolate of its own, 11–19 MiB before it does anything; a child process — the
 * SQL sandbox's, say — would take that memory out of the serving process). The message is the
 * list's page pick (its SQL text and four values) and the answer 30 ids, as src/db/costlyReads.ts
 * sends them; the other side answers at once, so what is measured is the transport alone: a worker
 * thread (structured clone), a child process with node's `advanced` serialisation, and one with
 * `json`. One read at a time, in rounds that alternate the three. Prints, per transport, the median
 * over the rounds of this process's CPU per round trip (for the thread this includes the thread's own
 * CPU: it is the same process) and of the wall time per round trip.
 * Usage: tsx bench/costlyReadsTransport.ts [--calls N] [--rounds N]   (bench/MEMORY.md)
 */

import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { median } from './stats.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '5' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

interface Message {
  id: number;
}

/** One side of a transport: send a request, be told of answers. */
interface Transport {
  name: string;
  send(message: object): void;
  on(listener: (message: Message) => void): void;
  off(listener: (message: Message) => void): void;
  close(): Promise<unknown>;
}

const ANSWER = 'rows: Array.from({ length: 30 }, (_, i) => ({ id: i + 1000 }))';
const REQUEST = {
  sql:
    'SELECT "id" FROM "Content" WHERE "siteId" = ? AND "channelId" IN (SELECT "id" FROM "Channel" ' +
    'WHERE "path" LIKE ?) ORDER BY "taxis" DESC, "id" DESC LIMIT ? OFFSET ?',
  params: [1, '1/2/%', 30, 0],
};

function thread(): Transport {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.on('message', (m) => parentPort.postMessage({ id: m.id, ${ANSWER} }));`,
    { eval: true },
  );
  return {
    name: 'worker thread',
    send: (message) => worker.postMessage(message),
    on: (listener) => worker.on('message', listener),
    off: (listener) => worker.off('message', listener),
    close: () => worker.terminate(),
  };
}

function child(file: string, serialization: 'advanced' | 'json'): Transport {
  const forked: ChildProcess = fork(file, [], { serialization });
  return {
    name: `child, ${serialization}`,
    send: (message) => forked.send(message),
    on: (listener) => forked.on('message', listener),
    off: (listener) => forked.off('message', listener),
    close: async () => forked.kill(),
  };
}

function roundTrip(transport: Transport, id: number): Promise<void> {
  return new Promise((resolve) => {
    const listener = (message: Message) => {
      if (message.id !== id) return;
      transport.off(listener);
      resolve();
    };
    transport.on(listener);
    transport.send({ id, ...REQUEST });
  });
}

async function measure(transport: Transport): Promise<{ cpuUs: number; wallUs: number }> {
  for (let id = 0; id < 200; id++) await roundTrip(transport, id);
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let id = 0; id < calls; id++) await roundTrip(transport, id);
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / calls, wallUs: ((performance.now() - started) * 1000) / calls };
}

const directory = mkdtempSync(join(tmpdir(), 'cms-transport-'));
const file = join(directory, 'echo.cjs');
writeFileSync(file, `process.on('message', (m) => process.send({ id: m.id, ${ANSWER} }));`);
const transports = [thread(), child(file, 'advanced'), child(file, 'json')];
try {
  const figures = new Map<string, { cpu: number[]; wall: number[] }>(
    transports.map((transport) => [transport.name, { cpu: [], wall: [] }]),
  );
  for (let round = 0; round < rounds; round++) {
    for (const transport of transports) {
      const { cpuUs, wallUs } = await measure(transport);
      figures.get(transport.name)?.cpu.push(cpuUs);
      figures.get(transport.name)?.wall.push(wallUs);
    }
  }
  console.log(`${calls} round trips a round, ${rounds} rounds; medians per round trip:`);
  for (const [name, { cpu, wall }] of figures) {
    console.log(
      `${name.padEnd(18)} this process's CPU ${median(cpu).toFixed(1)} µs, wall ${median(wall).toFixed(1)} µs`,
    );
  }
} finally {
  await Promise.all(transports.map((transport) => transport.close()));
  rmSync(directory, { recursive: true, force: true });
}
