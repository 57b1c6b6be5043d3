import type { Principal } from '../domain/principal.ts';
import { RecentlyUsed } from '../recentlyUsed.ts';
import {
  advanceCredentialsGeneration,
  GENERATION_KEY,
  GENERATION_WINDOW_MS,
} from '../state/credentialsGeneration.ts';
import type { SharedState } from '../state/port.ts';
import type { CredentialBudget } from './auth.ts';

/*
 * Credentials that authenticated lately, kept by each process so that a request with a known key or
 * token costs no database lookup. docs/api/authentication.md promises that a deleted, reset or revoked
 * key and a logged-out token stop working at once on every node, so an entry is good only for the
 * credentials generation it was looked up under: a counter in the shared state that every operation
 * able to change credentials (`x-changes-credentials: true` in openapi/cms.yaml) advances before it
 * answers (src/http/routes.ts), and that every request reads first. Reading it is one Redis GET, far cheaper than the lookup; in the database store it
 * would cost as much as the lookup itself, so the cache is on only with Redis (src/http/app.ts).
 *
 * The generation read BEFORE a lookup is the one its entry is filed under: a change committed while
 * the lookup ran advances the counter past it, so the entry is never used. When the store does not
 * answer, there is no generation and every request is looked up.
 */

/**
 * The counter's value and the end of its window. Every read of one window answers the same end (to
 * the millisecond: see CounterState); a counter started again (its window ended, or the store was
 * emptied) ends its window at another time, so the same count in it is another generation.
 */
export interface Generation {
  count: number;
  resetAt: number;
}

/** Redis's TIME and the PTTL added to it may round a millisecond apart between two reads. */
const WINDOW_END_TOLERANCE_MS = 2;

/** How often, and how far apart, an owed advance is tried once the connection is back. */
const OWED_ADVANCE_RETRIES = 10;
const OWED_ADVANCE_RETRY_MS = 1000;

function sameGeneration(a: Generation, b: Generation): boolean {
  return a.count === b.count && Math.abs(a.resetAt - b.resetAt) <= WINDOW_END_TOLERANCE_MS;
}

export interface CachedCredential {
  principal: Principal;
  budget: CredentialBudget;
  /** When the key or token expires (ms since epoch), or null: a hit after it is not a hit. */
  expiresAt: number | null;
}

export class CredentialCache {
  private readonly entries: RecentlyUsed<
    string,
    { generation: Generation; until: number; value: CachedCredential }
  >;

  /** A change whose advance of the generation the store did not take: advanced once it answers again. */
  private advanceOwed = false;

  constructor(
    private readonly state: SharedState,
    private readonly ttlMs: number,
    capacity = 10_000,
  ) {
    this.entries = new RecentlyUsed(capacity);
    // A change made on another node while this one's connection was down may have advanced
    // nothing this node can see: drop everything when the connection goes. And a change made here
    // meanwhile is told to the others as soon as it is back, without waiting for a request.
    state.onConnectionChange?.((connected) => {
      if (!connected) this.entries.clear();
      else if (this.advanceOwed) this.payWhenBack();
    });
  }

  /** The current generation, or undefined when the store cannot tell (then nothing is cached). */
  async generation(): Promise<Generation | undefined> {
    if (this.advanceOwed && !(await this.payOwedAdvance())) return this.unknown();
    let current = await this.state.get(GENERATION_KEY);
    // No counter yet (first use, its window ended, the store was emptied): start one.
    if (current === undefined) current = await this.state.increment(GENERATION_KEY, GENERATION_WINDOW_MS);
    if (current === undefined || current.count <= 0) return this.unknown();
    return { count: current.count, resetAt: current.resetAt.getTime() };
  }

  /** Makes the advance a change could not make; true once it is made. Never throws (fail policy). */
  private async payOwedAdvance(): Promise<boolean> {
    if ((await advanceCredentialsGeneration(this.state)) <= 0) return false;
    this.advanceOwed = false;
    return true;
  }

  /**
   * The connection is back: pay what is owed, trying again a few times, since the fail policy leaves
   * the store alone for a moment after a failure.
   */
  private payWhenBack(attempt = 0): void {
    void this.payOwedAdvance().then((paid) => {
      if (paid || attempt >= OWED_ADVANCE_RETRIES) return;
      setTimeout(() => this.payWhenBack(attempt + 1), OWED_ADVANCE_RETRY_MS).unref();
    });
  }

  /** The store did not answer: what was cached cannot be trusted once it answers again. */
  private unknown(): undefined {
    this.entries.clear();
    return undefined;
  }

  /**
   * Advances the generation on every node: every entry cached anywhere stops being used. When the
   * store does not take it, the advance is owed and made before this node trusts a generation again
   * (the other nodes drop their entries when they lose their own connection).
   */
  async invalidate(): Promise<void> {
    this.entries.clear();
    if ((await advanceCredentialsGeneration(this.state)) <= 0) this.advanceOwed = true;
  }

  get(fingerprint: string, generation: Generation, now = Date.now()): CachedCredential | undefined {
    const entry = this.entries.get(fingerprint);
    if (entry === undefined) return undefined;
    const expired = entry.value.expiresAt !== null && entry.value.expiresAt <= now;
    if (!sameGeneration(entry.generation, generation) || entry.until <= now || expired) {
      this.entries.delete(fingerprint);
      return undefined;
    }
    return entry.value;
  }

  set(fingerprint: string, generation: Generation, value: CachedCredential, now = Date.now()): void {
    this.entries.set(fingerprint, { generation, until: now + this.ttlMs, value });
  }

  forget(fingerprint: string): void {
    this.entries.delete(fingerprint);
  }
}
