import type { Logger } from 'pino';
import { describeError } from '../errorSummary.ts';
import {
  type CounterState,
  type SharedState,
  SharedStateUnavailable,
  type SignalListener,
  type Unsubscribe,
} from './port.ts';

/*
 * The one fail policy of the shared state, the same for every feature and both stores:
 * - counters fail OPEN: when the store does not answer, an increment answers count 0 ("not
 *   counted"), so limits let requests through. An outage of Redis must not take the API down, and
 *   a limit that cannot count is better skipped than turned into refusals for everyone.
 * - marks fail CLOSED: a single-use mark that cannot be checked could be used twice, so `mark`
 *   throws SharedStateUnavailable and the request is answered 503 with Retry-After.
 * - stored values fail CLOSED alike: an idempotency record that cannot be read or claimed could
 *   let a retried create make a second record, so every value call throws SharedStateUnavailable.
 * - signals are best effort: a failed broadcast or subscription, or a listener that throws, is
 *   logged, never thrown.
 * Warnings are throttled (one per kind of failure per interval) and never name the key, which may
 * identify a client.
 *
 * Once a call fails, the store is known to be down: every call applies the policy at once, without
 * asking it (a Redis outage would otherwise add a command timeout to request after request), and a
 * background probe pings the store every PROBE_INTERVAL_MS; the first answer brings it back.
 */

export const WARNING_INTERVAL_MS = 30_000;
export const PROBE_INTERVAL_MS = 1_000;

/** What the fail policy did without asking the store (it failed a moment ago). */
class StoreDown extends Error {
  override name = 'StoreDown';
  constructor() {
    super('the store is down; a background probe watches for its return');
  }
}

type Failure = 'counter' | 'mark' | 'value' | 'broadcast' | 'subscribe' | 'listener';

const WARNING: Record<Failure, string> = {
  counter: 'shared state does not answer: counters are not counted (limits let requests through)',
  mark: 'shared state does not answer: single-use marks are refused (503)',
  value: 'shared state does not answer: stored values (idempotency keys) are refused (503)',
  broadcast: 'shared state does not answer: a signal was not sent',
  subscribe: 'shared state does not answer: a subscription could not be made',
  listener: 'a shared-state signal listener failed',
};

export interface FailPolicyOptions {
  /** How often the store is pinged while it is down. */
  probeIntervalMs?: number;
  /** The store did not answer at start (a worker started during an outage): begin as down. */
  startDown?: boolean;
}

export function withFailPolicy(
  state: SharedState,
  logger: Logger,
  options: FailPolicyOptions = {},
): SharedState {
  const probeIntervalMs = options.probeIntervalMs ?? PROBE_INTERVAL_MS;
  const lastWarning = new Map<Failure, number>();
  const suppressed = new Map<Failure, number>();

  /** Set while the store is known to be down: the probe that will bring it back. */
  let probe: NodeJS.Timeout | undefined;
  let probing = false;

  function markDown(): void {
    if (probe !== undefined) return;
    probe = setInterval(() => {
      if (probing) return;
      probing = true;
      state.ping().then(
        () => {
          clearInterval(probe);
          probe = undefined;
          probing = false;
          logger.info({ store: state.kind }, 'shared state answers again');
        },
        () => {
          probing = false;
        },
      );
    }, probeIntervalMs);
    // A probe must not keep a stopping process alive.
    probe.unref();
  }

  /** Runs `call` on the store unless it is known to be down; a failure marks it down. */
  async function guarded<T>(call: () => Promise<T>): Promise<T> {
    if (probe !== undefined) throw new StoreDown();
    try {
      return await call();
    } catch (error) {
      markDown();
      throw error;
    }
  }

  function warn(failure: Failure, error: unknown): void {
    const now = Date.now();
    const last = lastWarning.get(failure);
    if (last !== undefined && now - last < WARNING_INTERVAL_MS) {
      suppressed.set(failure, (suppressed.get(failure) ?? 0) + 1);
      return;
    }
    lastWarning.set(failure, now);
    const repeats = suppressed.get(failure) ?? 0;
    suppressed.delete(failure);
    logger.warn(
      { err: describeError(error), store: state.kind, ...(repeats > 0 && { suppressed: repeats }) },
      WARNING[failure],
    );
  }

  // Known down from the start: no request waits for a command timeout to learn it.
  if (options.startDown === true) markDown();

  /** A value call: fails closed, as marks do. */
  async function closed<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await guarded(call);
    } catch (error) {
      warn('value', error);
      throw new SharedStateUnavailable({ cause: error });
    }
  }

  return {
    kind: state.kind,
    async increment(key: string, windowMs: number): Promise<CounterState> {
      try {
        return await guarded(() => state.increment(key, windowMs));
      } catch (error) {
        warn('counter', error);
        return { count: 0, resetAt: new Date(Date.now() + windowMs) };
      }
    },
    async get(key: string): Promise<CounterState | undefined> {
      try {
        return await guarded(() => state.get(key));
      } catch (error) {
        warn('counter', error);
        return undefined;
      }
    },
    async decrement(key: string): Promise<void> {
      try {
        await guarded(() => state.decrement(key));
      } catch (error) {
        warn('counter', error);
      }
    },
    async reset(key: string): Promise<void> {
      try {
        await guarded(() => state.reset(key));
      } catch (error) {
        warn('counter', error);
      }
    },
    async mark(key: string, ttlMs: number): Promise<boolean> {
      try {
        return await guarded(() => state.mark(key, ttlMs));
      } catch (error) {
        warn('mark', error);
        throw new SharedStateUnavailable({ cause: error });
      }
    },
    putValue: (key, value, ttlMs) => closed(() => state.putValue(key, value, ttlMs)),
    getValue: (key) => closed(() => state.getValue(key)),
    replaceValue: (key, expected, value, ttlMs) =>
      closed(() => state.replaceValue(key, expected, value, ttlMs)),
    deleteValue: (key, expected) => closed(() => state.deleteValue(key, expected)),
    async broadcast(channel: string, message: string): Promise<void> {
      try {
        await guarded(() => state.broadcast(channel, message));
      } catch (error) {
        warn('broadcast', error);
      }
    },
    async subscribe(channel: string, listener: SignalListener): Promise<Unsubscribe> {
      try {
        // A listener that throws must not break delivery to the others (or the connection).
        const unsubscribe = await state.subscribe(channel, (message) => {
          try {
            listener(message);
          } catch (error) {
            warn('listener', error);
          }
        });
        // Best effort too: a process that stops during an outage must not fail on it.
        return () =>
          unsubscribe().catch((error: unknown) => {
            warn('subscribe', error);
          });
      } catch (error) {
        warn('subscribe', error);
        return async () => {};
      }
    },
    onConnectionChange(listener: (connected: boolean) => void): void {
      state.onConnectionChange?.(listener);
    },
    ping: () => state.ping(),
    close: () => {
      clearInterval(probe);
      probe = undefined;
      return state.close();
    },
  };
}
