import { describe, expect, test } from '@jest/globals';
import pino from 'pino';
import { withFailPolicy } from '../../src/state/failPolicy.ts';
import { type CounterState, type SharedState, SharedStateUnavailable } from '../../src/state/port.ts';

/*
 * A store known to be down is not asked until a background probe sees it back, on a store the test
 * controls: what matters is whether the store is asked at all, which a real store that is down
 * cannot show.
 */

class ControlledStore implements SharedState {
  readonly kind = 'redis';
  down = true;
  calls = 0;
  private count = 0;

  private async call<T>(result: () => T): Promise<T> {
    this.calls++;
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    return result();
  }
  increment(_key: string, windowMs: number): Promise<CounterState> {
    return this.call(() => ({ count: ++this.count, resetAt: new Date(Date.now() + windowMs) }));
  }
  get(): Promise<CounterState | undefined> {
    return this.call(() => undefined);
  }
  decrement(): Promise<void> {
    return this.call(() => undefined);
  }
  reset(): Promise<void> {
    return this.call(() => undefined);
  }
  mark(): Promise<boolean> {
    return this.call(() => true);
  }
  putValue(): Promise<boolean> {
    return this.call(() => true);
  }
  getValue(): Promise<string | undefined> {
    return this.call(() => undefined);
  }
  replaceValue(): Promise<boolean> {
    return this.call(() => true);
  }
  deleteValue(): Promise<boolean> {
    return this.call(() => true);
  }
  broadcast(): Promise<void> {
    return this.call(() => undefined);
  }
  async subscribe() {
    return () => this.call(() => undefined);
  }
  pings = 0;
  async ping(): Promise<void> {
    this.pings++;
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  }
  async close(): Promise<void> {}
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('once a call fails the store is known to be down until a background probe sees it back', () => {
  test('calls while it is down apply the policy without asking the store, however long it lasts; once the probe succeeds it is asked again', async () => {
    const store = new ControlledStore();
    const state = withFailPolicy(store, pino({ level: 'silent' }), { probeIntervalMs: 50 });
    try {
      expect((await state.increment('k', 60_000)).count).toBe(0);
      expect(store.calls).toBe(1);
      // Down: the policy answers at once, the store is not asked, whatever the time.
      for (let round = 0; round < 3; round++) {
        expect((await state.increment('k', 60_000)).count).toBe(0);
        await expect(state.mark('m', 60_000)).rejects.toBeInstanceOf(SharedStateUnavailable);
        await expect(state.broadcast('c', 'x')).resolves.toBeUndefined();
        expect(await state.get('k')).toBeUndefined();
        await sleep(100);
      }
      expect(store.calls).toBe(1);
      // Meanwhile the probe pings it.
      expect(store.pings).toBeGreaterThan(0);

      store.down = false;
      let count = 0;
      for (let tries = 0; count === 0 && tries < 200; tries++) {
        await sleep(20);
        count = (await state.increment('k', 60_000)).count;
      }
      expect(count).toBe(1);
      expect(await state.mark('m', 60_000)).toBe(true);
      expect(store.calls).toBe(3);
    } finally {
      await state.close();
    }
  });

  test('a store that did not answer at start is down from the first call: nothing waits on it', async () => {
    const store = new ControlledStore();
    const state = withFailPolicy(store, pino({ level: 'silent' }), { probeIntervalMs: 50, startDown: true });
    try {
      expect((await state.increment('k', 60_000)).count).toBe(0);
      await expect(state.mark('m', 60_000)).rejects.toBeInstanceOf(SharedStateUnavailable);
      expect(store.calls).toBe(0);
      store.down = false;
      let count = 0;
      for (let tries = 0; count === 0 && tries < 200; tries++) {
        await sleep(20);
        count = (await state.increment('k', 60_000)).count;
      }
      expect(count).toBe(1);
    } finally {
      await state.close();
    }
  });

  test('an unsubscribe the store cannot answer is logged, not thrown (a process stopping in an outage)', async () => {
    const store = new ControlledStore();
    const state = withFailPolicy(store, pino({ level: 'silent' }));
    const unsubscribe = await state.subscribe('c', () => undefined);
    await expect(unsubscribe()).resolves.toBeUndefined();
    expect(store.calls).toBe(1);
    await state.close();
  });

  test('a store that answers is never marked down, nor probed', async () => {
    const store = new ControlledStore();
    store.down = false;
    const state = withFailPolicy(store, pino({ level: 'silent' }), { probeIntervalMs: 10 });
    for (let i = 1; i <= 5; i++) expect((await state.increment('k', 60_000)).count).toBe(i);
    await sleep(50);
    expect(store.calls).toBe(5);
    expect(store.pings).toBe(0);
  });
});
