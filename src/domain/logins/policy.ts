/*
 * The protection of logins and password changes (docs/security/credentials.md "Lockout and
 * throttles"), in one place so that the documentation and the contract can state it and tests can
 * drive it.
 */

import { DEFAULT_PASSWORD_RULE, type PasswordRule } from '../accounts/rules.ts';
import type { Scope } from '../principal.ts';

/** This many failed logins of one account from one address lock it for that address (the defaults). */
export const LOCKOUT_FAILURES = 5;
export const LOCKOUT_MINUTES = 15;
/**
 * Failed logins of one account from every address, in a LOCKOUT_MINUTES window, past which an
 * address that has itself failed on the account is turned away until the window ends.
 */
export const THROTTLE_FAILURES = 20;
/** Failed logins (and password changes) one address may make in a minute, whatever the accounts. */
export const ADDRESS_FAILURES_PER_MINUTE = 10;

/**
 * What an operator may set (LOCKOUT_FAILURES, LOCKOUT_MINUTES, LOGIN_THROTTLE_FAILURES,
 * LOGIN_ADDRESS_FAILURES_PER_MINUTE, PASSWORD_MIN_LENGTH, USER_TOKEN_SCOPES, PASSWORDLESS_LOGIN;
 * see config).
 */
export interface AccountPolicy {
  lockoutFailures: number;
  lockoutMinutes: number;
  throttleFailures: number;
  addressFailuresPerMinute: number;
  passwordRule: PasswordRule;
  /** Scopes a user's token carries beyond a member's reads (none by default: a member is not an editor). */
  userTokenScopes: readonly Scope[];
  /** Whether `openId` login is accepted from anyone, not only from a caller with a `Users` key. */
  passwordlessLogin: boolean;
}

export const DEFAULT_ACCOUNT_POLICY: AccountPolicy = Object.freeze({
  lockoutFailures: LOCKOUT_FAILURES,
  lockoutMinutes: LOCKOUT_MINUTES,
  throttleFailures: THROTTLE_FAILURES,
  addressFailuresPerMinute: ADDRESS_FAILURES_PER_MINUTE,
  passwordRule: DEFAULT_PASSWORD_RULE,
  userTokenScopes: [],
  passwordlessLogin: false,
});

/** The window of the per-address failure ceiling. */
export const ADDRESS_WINDOW_MS = 60_000;

/** Lifetime of an access token from login: one day. Logout or a password change ends it sooner. */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

/** Whether a temporary lockout is still running at `now`. */
export function isLockedOut(lockedUntil: Date | null, now: Date): boolean {
  return lockedUntil !== null && lockedUntil.getTime() > now.getTime();
}
