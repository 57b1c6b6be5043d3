import { createHash } from 'node:crypto';
import { type CounterState, type SharedState, SharedStateUnavailable } from '../../state/port.ts';
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
 *
 * An unlock by an administrator (liftLockouts) must lift the lockouts of every address, but the
 * state cannot list them; so it marks the time of the unlock on the account instead (a counter
 * started afresh, LOCKOUT_MINUTES long) and a lock whose window started before that mark no longer
 * holds. Both windows are equally long, so comparing their ends compares their starts; a lock set
 * after an unlock starts a window of its own for the same reason.
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

/** The counters of one account name, whatever the address. */
function accountKeys(kind: AccountKind, name: string) {
  const account = `${kind}:${digest(name.trim().toLowerCase())}`;
  return {
    /** The digest of the account name the other keys hold. */
    name: account,
    /** Failures of the account from every address (the throttle's window). */
    account: `login:account:${account}`,
    /** Started afresh by an unlock: a lock whose window began before it no longer holds. */
    unlocked: `login:unlocked:${account}`,
    /** Started afresh whenever an address is locked out of the account; an unlock forgets it. */
    locked: `login:locked:${account}`,
  };
}

/** The shared-state counters an attempt is judged by. */
export function attemptKeys(attempt: Attempt) {
  const { name: account, ...keys } = accountKeys(attempt.kind, attempt.account);
  return {
    ...keys,
    /** Failures from the address, whatever the accounts (a one-minute window). */
    address: `login:address:${attempt.address}`,
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

/** A counter's window began no later than an unlock's (both are LOCKOUT_MINUTES long). */
const startedBefore = (counter: CounterState, unlocked: CounterState | undefined) =>
  unlocked !== undefined && counter.resetAt.getTime() <= unlocked.resetAt.getTime();

/** Starts the counter afresh: a window of its own from now, whatever was there. */
async function restart(state: SharedState, key: string, windowMs: number): Promise<CounterState> {
  await state.reset(key);
  return state.increment(key, windowMs);
}

/** The one lock of this address on this account, unless an unlock came after it was set. */
async function lockHolds(state: SharedState, keys: ReturnType<typeof attemptKeys>): Promise<boolean> {
  const lock = await state.get(keys.lock);
  if (lock === undefined || lock.count === 0) return false;
  return !startedBefore(lock, await state.get(keys.unlocked));
}

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
  if (await lockHolds(state, keys)) {
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
      // A fresh window for the lock, so that an earlier unlock does not count against it.
      pair.count === policy.lockoutFailures
        ? restart(state, keys.lock, lockoutMs).then(() =>
            Promise.all([state.reset(keys.pair), restart(state, keys.locked, lockoutMs)]),
          )
        : undefined,
    ]);
    throw error;
  }
  await Promise.all([state.reset(keys.pair), state.reset(keys.account)]);
  return result;
}

/** The names an account logs in with (user name, e-mail, mobile, openId), blanks left out. */
function namesOf(names: readonly (string | null | undefined)[]): string[] {
  const normalized = names.flatMap((name) =>
    name == null || name.trim() === '' ? [] : [name.trim().toLowerCase()],
  );
  return [...new Set(normalized)];
}

/**
 * Whether an unlock of the account would lift something in the shared state: an address locked
 * out of it (by any of its names) since the last unlock, or its account-wide throttle. When the
 * state does not answer, nothing is known to be held (the counters fail open).
 */
export async function holdsLockouts(
  state: SharedState,
  policy: Pick<AccountPolicy, 'throttleFailures'>,
  kind: AccountKind,
  names: readonly (string | null | undefined)[],
): Promise<boolean> {
  const held = await Promise.all(
    namesOf(names).map(async (name) => {
      const keys = accountKeys(kind, name);
      const [locked, account] = await Promise.all([state.get(keys.locked), state.get(keys.account)]);
      return (locked !== undefined && locked.count > 0) || (account?.count ?? 0) >= policy.throttleFailures;
    }),
  );
  return held.includes(true);
}

/**
 * An administrator's unlock: every address locked out of the account (by any of its names) gets
 * in again at once, on every node, and the account-wide throttle starts again from nothing. When
 * the state does not answer and `required` (it showed lockouts to lift a moment ago), throws
 * SharedStateUnavailable (503), so that the unlock never seems done while they still hold;
 * otherwise an unlock of the database's lock alone is not held up by an outage.
 */
export async function liftLockouts(
  state: SharedState,
  policy: Pick<AccountPolicy, 'lockoutMinutes'>,
  kind: AccountKind,
  names: readonly (string | null | undefined)[],
  required: boolean,
): Promise<void> {
  const lockoutMs = policy.lockoutMinutes * 60_000;
  await Promise.all(
    namesOf(names).map(async (name) => {
      const keys = accountKeys(kind, name);
      const unlocked = await restart(state, keys.unlocked, lockoutMs);
      // An increment the store could not count answers 0 (the fail policy).
      if (unlocked.count === 0 && required) throw new SharedStateUnavailable();
      await Promise.all([state.reset(keys.locked), state.reset(keys.account)]);
    }),
  );
}
