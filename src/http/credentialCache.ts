import type { Principal } from '../domain/principal.ts';
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

const GENERATION_KEY = 'credentials:generation';
/** The counter's window; a new window changes resetAt, so it is a new generation too. */
const GENERATION_WINDOW_MS = 7 * 24 * 60 * 60_000;

/**
 * The counter's value and the end of its window. The store reports the window's end from its
 * remaining time, so two reads of one window may differ by a few milliseconds; a counter started
 * again (its window ended, or the store was emptied) ends its window at another time, so the same
 * count in it is another generation.
 */
export interface Generation {
  count: number;
  resetAt: number;
}

const WINDOW_END_TOLERANCE_MS = 1000;

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
  private readonly entries = new Map<
    string,
    { generation: Generation; until: number; value: CachedCredential }
  >();

  constructor(
    private readonly state: SharedState,
    private readonly ttlMs: number,
    private readonly capacity = 10_000,
  ) {}

  /** The current generation, or undefined when the store cannot tell (then nothing is cached). */
  async generation(): Promise<Generation | undefined> {
    let current = await this.state.get(GENERATION_KEY);
    // No counter yet (first use, its window ended, the store was emptied): start one.
    if (current === undefined) current = await this.state.increment(GENERATION_KEY, GENERATION_WINDOW_MS);
    if (current === undefined || current.count <= 0) return undefined;
    return { count: current.count, resetAt: current.resetAt.getTime() };
  }

  /** Advances the generation on every node: every entry cached anywhere stops being used. */
  async invalidate(): Promise<void> {
    this.entries.clear();
    await this.state.increment(GENERATION_KEY, GENERATION_WINDOW_MS);
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
    this.entries.delete(fingerprint);
    this.entries.set(fingerprint, { generation, until: now + this.ttlMs, value });
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  forget(fingerprint: string): void {
    this.entries.delete(fingerprint);
  }
}
