/*
 * The shared-state port: the one small interface for state that every node of the service must
 * share — counters with expiry (rate limits, login failures), single-use marks (captcha answers,
 * used tokens, one-shot jobs), small stored values with expiry (idempotency records) and a broadcast
 * signal ("restart", "cache invalidated"). Two
 * implementations stand behind it: Redis when REDIS_URL is set (src/state/redis.ts), the database
 * otherwise (src/state/database.ts); createSharedState (src/state/index.ts) picks one and wraps it
 * in the fail policy (src/state/failPolicy.ts), so callers never handle an outage themselves.
 *
 * Keys are plain strings chosen by the feature, e.g. `rate:address:1.2.3.4`, `login:user:42`,
 * `captcha:<id>`: start each with the feature's own word so that features never collide. Never put a
 * secret in a key (hash it first): keys are stored in clear.
 */

/** A counter after an increment: how many hits in the current window, and when the window ends. */
export interface CounterState {
  /**
   * Hits in the current window, 1 or more after a real increment. 0 means the store could not
   * count (the fail policy let the request through): treat it as under every limit.
   */
  count: number;
  /**
   * The instant the window ends, in the store's clock: every read of one window answers the same
   * instant (to the millisecond), however late its reply is handled, so windows compare in order.
   */
  resetAt: Date;
}

/** Stops a subscription; resolves once no further message will be delivered to that listener. */
export type Unsubscribe = () => Promise<void>;

export type SignalListener = (message: string) => void;

export interface SharedState {
  /** Which store stands behind the port. */
  readonly kind: SharedStateKind;
  /**
   * Adds one to the counter `key` and answers its state. The first increment starts a window of
   * `windowMs`; once the window has ended, the next increment starts a new one at 1. Atomic: N
   * concurrent increments on any nodes answer exactly the counts 1..N.
   */
  increment(key: string, windowMs: number): Promise<CounterState>;
  /** The counter's state without counting, or undefined when it is absent or its window has ended. */
  get(key: string): Promise<CounterState | undefined>;
  /** Takes one back (never below 0), e.g. for a request that should not have counted. */
  decrement(key: string): Promise<void>;
  /** Forgets the counter, e.g. the login failures of an account after a successful login. */
  reset(key: string): Promise<void>;
  /**
   * Single use: sets the mark `key` for `ttlMs` if it is absent and answers true; answers false
   * when the mark is already there (used). After `ttlMs` the mark is gone and may be set again.
   */
  mark(key: string, ttlMs: number): Promise<boolean>;
  /**
   * Stores the small value `value` under `key` for `ttlMs` if no live value is there, and answers
   * true; answers false, storing nothing, when one is (set-if-absent: of concurrent calls on any
   * nodes exactly one wins). After `ttlMs` the value is gone and the key may be set again.
   */
  putValue(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** The live value under `key`, or undefined when it is absent or has expired. */
  getValue(key: string): Promise<string | undefined>;
  /**
   * Compare-and-set: replaces the value under `key` with `value` for a new `ttlMs` only while it is
   * still `expected` (and live), answering whether it did. A value another writer replaced, or one
   * that expired meanwhile, is left alone.
   */
  replaceValue(key: string, expected: string, value: string, ttlMs: number): Promise<boolean>;
  /** Deletes the value under `key` only while it is still `expected`, answering whether it did. */
  deleteValue(key: string, expected: string): Promise<boolean>;
  /** Sends `message` to every subscriber of `channel` on every node (this one included). Best effort. */
  broadcast(channel: string, message: string): Promise<void>;
  /** Calls `listener` with every message broadcast on `channel` from now on, until unsubscribed. */
  subscribe(channel: string, listener: SignalListener): Promise<Unsubscribe>;
  /**
   * Calls `listener` with false whenever this node's connection to the store is lost, and with true
   * when it is back (Redis only; the database store has no connection of its own to lose). Caches
   * that trust the store's signals drop themselves when it goes, since signals sent meanwhile never
   * reach them.
   */
  onConnectionChange?(listener: (connected: boolean) => void): void;
  /** Rejects when the store does not answer (readiness). */
  ping(): Promise<void>;
  /** Releases what the implementation opened itself (subscriber connections, timers). */
  close(): Promise<void>;
}

/** Which store stands behind the port; readiness names it when it does not answer. */
export type SharedStateKind = 'redis' | 'database';

/** Thrown by operations that fail closed (marks, stored values) when the store does not answer; the HTTP layer answers 503. */
export class SharedStateUnavailable extends Error {
  override name = 'SharedStateUnavailable';
  constructor(options?: { cause?: unknown }) {
    super('Shared state is unavailable', options);
  }
}
