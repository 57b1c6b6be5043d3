import { expect, test } from '@jest/globals';
import { SandboxBusy, SandboxGate } from '../../src/db/sandbox/gate.ts';

/*
 * The gate of a sandbox alone (src/db/sandbox/gate.ts), with tasks the test finishes itself:
 * bounds on places, on each caller's share and on waiting, and turns in arrival order. Over HTTP on
 * both databases: test/stl/sqlContents.test.ts, "fair sharing".
 */

function task() {
  let finish: (value: string) => void = () => undefined;
  const done = new Promise<string>((resolve) => {
    finish = resolve;
  });
  let started = false;
  return {
    run: () => {
      started = true;
      return done;
    },
    finish: (value: string) => finish(value),
    get started() {
      return started;
    },
  };
}

async function refusal(promise: Promise<unknown>): Promise<SandboxBusy> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SandboxBusy) return error;
    throw error;
  }
  throw new Error('not refused');
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('places, shares and turns', async () => {
  const gate = new SandboxGate({ capacity: 1, maxWaiting: 2, perCaller: 2 });
  const [a1, a2, b1, c1] = [task(), task(), task(), task()];
  const first = gate.run('a', 2000, a1.run);
  const second = gate.run('a', 2000, a2.run);
  await tick();
  expect([a1.started, a2.started]).toEqual([true, false]);
  expect(gate.load).toEqual({ running: 1, waiting: 1 });

  const share = await refusal(gate.run('a', 2000, task().run));
  expect([share.message, share.retryAfterSeconds]).toEqual([
    'The SQL sandbox is busy: this caller already has 2 queries running or waiting (at most 2); retry in 2 s',
    2,
  ]);

  const third = gate.run('b', 2000, b1.run);
  const full = await refusal(gate.run('c', 2000, c1.run));
  expect(full.message).toBe('The SQL sandbox is busy: every place to run or wait is taken; retry in 2 s');

  a1.finish('a1');
  expect(await first).toBe('a1');
  await tick();
  expect([a2.started, b1.started]).toEqual([true, false]);
  a2.finish('a2');
  b1.finish('b1');
  expect(await Promise.all([second, third])).toEqual(['a2', 'b1']);
  expect(gate.load).toEqual({ running: 0, waiting: 0 });
  // Shares are given back.
  const again = task();
  const last = gate.run('a', 2000, again.run);
  again.finish('again');
  expect(await last).toBe('again');
});

test('a query that waits longer than the queries ahead of it may take is told to retry', async () => {
  const gate = new SandboxGate({ capacity: 1, maxWaiting: 4, perCaller: 4 });
  const stuck = task();
  const running = gate.run('a', 1, stuck.run);
  const waited = await refusal(gate.run('b', 1, task().run));
  expect(waited.message).toMatch(
    /^The SQL sandbox is busy: this query waited \d+ ms for its turn; retry in 1 s$/,
  );
  expect(gate.load).toEqual({ running: 1, waiting: 0 });
  stuck.finish('done');
  expect(await running).toBe('done');
  expect(gate.load).toEqual({ running: 0, waiting: 0 });
}, 30_000);

test('a task that fails gives its place back', async () => {
  const gate = new SandboxGate({ capacity: 1, maxWaiting: 1, perCaller: 1 });
  await expect(gate.run('a', 1000, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  expect(gate.load).toEqual({ running: 0, waiting: 0 });
  expect(await gate.run('a', 1000, async () => 'ok')).toBe('ok');
});
