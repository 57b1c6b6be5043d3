import { describe, expect, test } from '@jest/globals';
import pino from 'pino';
import { withFailPolicy } from '../../src/state/failPolicy.ts';
import { type CounterState, type SharedState, SharedStateUnavailable } from '../../src/state/port.ts';

/*
 * The pause after a failure, on a store the test controls: what matters is whether the store is
 * asked at all, which a real store that is down cannot show.
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
  broadcast(): Promise<void> {
    return this.call(() => undefined);
  }
  async subscribe() {
    return async () => {};
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('after a failure the store is left alone for a pause', () => {
  test('calls during the pause apply the policy without asking the store; afterwards it is asked again', async () => {
    const store = new ControlledStore();
    const state = withFailPolicy(store, pino({ level: 'silent' }), { pauseMs: 200 });

    expect((await state.increment('k', 60_000)).count).toBe(0);
    expect(store.calls).toBe(1);
    // Paused: the policy answers at once, the store is not asked.
    expect((await state.increment('k', 60_000)).count).toBe(0);
    await expect(state.mark('m', 60_000)).rejects.toBeInstanceOf(SharedStateUnavailable);
    await expect(state.broadcast('c', 'x')).resolves.toBeUndefined();
    expect(await state.get('k')).toBeUndefined();
    expect(store.calls).toBe(1);

    store.down = false;
    await sleep(300);
    expect((await state.increment('k', 60_000)).count).toBe(1);
    expect(await state.mark('m', 60_000)).toBe(true);
    expect(store.calls).toBe(3);
  });

  test('a store that answers is never paused', async () => {
    const store = new ControlledStore();
    store.down = false;
    const state = withFailPolicy(store, pino({ level: 'silent' }), { pauseMs: 60_000 });
    for (let i = 1; i <= 5; i++) expect((await state.increment('k', 60_000)).count).toBe(i);
    expect(store.calls).toBe(5);
  });
});
