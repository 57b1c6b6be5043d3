import { createHash } from 'node:crypto';
import type { SharedState } from '../../state/port.ts';
import type { AccountKind } from '../accounts/rules.ts';
import { DomainError, RateLimited, secondsUntil } from '../errors.ts';
import { loginFailed } from './authenticate.ts';
import { type AccountPolicy, ADDRESS_WINDOW_MS } from './policy.ts';

/*
 * Brute-force protection of logins and password changes (docs/security/credentials.md "Lockout and
 * throttles"). Only failures count, so a site's back end signing many members in from one address
 * is never slowed; and the hard lockout is keyed to the account AND the address, so failures from
 * elsewhere never lock the owner out of their own address:
 * - lockout: `lockoutFailures` failures of one account from one address refuse that address on that
 *   account (even with the right password) for `lockoutMinutes`;
 * - account-wide throttle: past `throttleFailures` failures of the account from every address in
 *   that window, an address that has itself failed on the account is answered 429 until the window
 *   ends (an address without failures, such as the owner's, still gets through);
 * - address ceiling: `addressFailuresPerMinute` failures from one address, whatever the accounts,
 *   answer 429 until the minute ends.
 * The counters live in the shared state, so every node counts together. Keys hold a digest of the
 * account, never the name itself.
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

/** The shared-state counters an attempt is judged by. */
export function attemptKeys(attempt: Attempt) {
  const account = `${attempt.kind}:${digest(attempt.account.trim().toLowerCase())}`;
  return {
    /** Failures from the address, whatever the accounts (a one-minute window). */
    address: `login:address:${attempt.address}`,
    /** Failures of the account from every address (the throttle's window). */
    account: `login:account:${account}`,
    /** Failures (and attempts under way) of the account from this address, since its last success. */
    pair: `login:pair:${account}:${attempt.address}`,
    /** Present while this address is locked out of this account. */
    lock: `login:lock:${account}:${attempt.address}`,
  };
}

function tooMany(resetAt: Date, now: Date): RateLimited {
  const retryAfter = secondsUntil(resetAt, now.getTime());
  return new RateLimited(
    `Too many failed login or password attempts; retry in ${retryAfter} seconds`,
    retryAfter,
  );
}

const isLoginFailure = (error: unknown) => error instanceof DomainError && error.code === 'login-failed';

/**
 * Runs one login or password change (`check`, which throws the `login-failed` DomainError when the
 * account or password is wrong) under the protection above: refused before `check` runs when a
 * limit holds, its failure counted, its success clearing the account's failures.
 */
export async function guardAttempt<T>(
  state: SharedState,
  policy: AccountPolicy,
  attempt: Attempt,
  check: () => Promise<T>,
  now: Date = new Date(),
): Promise<T> {
  const keys = attemptKeys(attempt);
  const lockoutMs = policy.lockoutMinutes * 60_000;
  const [address, account] = await Promise.all([state.get(keys.address), state.get(keys.account)]);
  if (address !== undefined && address.count >= policy.addressFailuresPerMinute) {
    throw tooMany(address.resetAt, now);
  }
  // Counted before the check, so that attempts made at once from one address cannot pass the lockout.
  const pair = await state.increment(keys.pair, lockoutMs);
  // The lock is read after the pair is counted: the attempt that sets it does so before it resets
  // the pair, so an attempt counted after that reset always sees the lock.
  const lock = await state.get(keys.lock);
  if (lock !== undefined && lock.count > 0) {
    await state.decrement(keys.pair);
    // A locked-out address gets the answer of any failed login: it learns nothing about the password.
    throw loginFailed();
  }
  const failedBefore = pair.count > 1;
  if (account !== undefined && account.count >= policy.throttleFailures && failedBefore) {
    await state.decrement(keys.pair);
    throw tooMany(account.resetAt, now);
  }
  if (pair.count > policy.lockoutFailures) {
    await state.decrement(keys.pair);
    throw loginFailed();
  }
  let result: T;
  try {
    result = await check();
  } catch (error) {
    if (!isLoginFailure(error)) {
      await state.decrement(keys.pair);
      throw error;
    }
    await Promise.all([
      state.increment(keys.address, ADDRESS_WINDOW_MS),
      state.increment(keys.account, lockoutMs),
      pair.count === policy.lockoutFailures
        ? state.increment(keys.lock, lockoutMs).then(() => state.reset(keys.pair))
        : undefined,
    ]);
    throw error;
  }
  await Promise.all([state.reset(keys.pair), state.reset(keys.account)]);
  return result;
}
