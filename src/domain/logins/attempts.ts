import { createHash } from 'node:crypto';
import type { SharedState } from '../../state/port.ts';
import type { AccountKind } from '../accounts/rules.ts';
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
  /** The caller's address, already grouped the way the service's rate limiter groups it. */
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
 * Counts one attempt. Answers undefined while under both limits, otherwise the seconds until the
 * fuller window ends (for Retry-After).
 */
export async function countAttempt(state: SharedState, attempt: Attempt, now: Date = new Date()) {
  const counters = await Promise.all(
    attemptKeys(attempt).map((key) => state.increment(key, ATTEMPT_WINDOW_MS)),
  );
  const over = counters.filter((counter) => counter.count > ATTEMPTS_PER_WINDOW);
  if (over.length === 0) return undefined;
  const resetAt = Math.max(...over.map((counter) => counter.resetAt.getTime()));
  return Math.max(1, Math.ceil((resetAt - now.getTime()) / 1000));
}
