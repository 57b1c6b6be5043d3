import { createHash } from 'node:crypto';
import type { SharedState } from '../../state/port.ts';
import type { AccountKind } from '../accounts/rules.ts';
import { RateLimited, secondsUntil } from '../errors.ts';
import { ATTEMPT_WINDOW_MS, ATTEMPTS_PER_WINDOW } from './policy.ts';

/*
 * Rate limits of logins and password changes, on top of the lockout: a guesser is slowed per
 * account (whatever address it uses) and per address (whatever account it tries). The counters live
 * in the shared state, so every node counts together. Keys hold a digest of the account, never the
 * name itself.
 */

export interface Attempt {
  kind: AccountKind;
  /** The user name, e-mail, mobile or openId the attempt names. */
  account: string;
  /** The caller's address as handlers get it (`clientAddress`: grouped like the rate limiter's). */
  address: string;
}

function digest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The shared-state counters an attempt counts against: its account's and its address's. */
export function attemptKeys(attempt: Attempt): string[] {
  return [
    `login:account:${attempt.kind}:${digest(attempt.account.trim().toLowerCase())}`,
    `login:address:${attempt.address}`,
  ];
}

/**
 * Counts one attempt against its account and its address. Over either limit it throws RateLimited
 * (429, with the seconds until the fuller window ends), before any password is checked.
 */
export async function limitAttempt(
  state: SharedState,
  attempt: Attempt,
  now: Date = new Date(),
): Promise<void> {
  const counters = await Promise.all(
    attemptKeys(attempt).map((key) => state.increment(key, ATTEMPT_WINDOW_MS)),
  );
  const over = counters.filter((counter) => counter.count > ATTEMPTS_PER_WINDOW);
  if (over.length === 0) return;
  const resetAt = new Date(Math.max(...over.map((counter) => counter.resetAt.getTime())));
  const retryAfter = secondsUntil(resetAt, now.getTime());
  throw new RateLimited(`Too many login or password attempts; retry in ${retryAfter} seconds`, retryAfter);
}
