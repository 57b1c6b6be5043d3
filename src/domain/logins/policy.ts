/*
 * The protection of logins and password changes (docs/design-decisions.md, "Authentication and
 * scopes"), in one place so that the docs and the contract can state it and tests can drive it.
 */

import { DEFAULT_PASSWORD_RULE, type PasswordRule } from '../accounts/rules.ts';

/** Every this-many failed logins in a row lock the account for LOCKOUT_MINUTES (the defaults). */
export const LOCKOUT_FAILURES = 5;
export const LOCKOUT_MINUTES = 15;

/** What an operator may set (LOCKOUT_FAILURES, LOCKOUT_MINUTES, PASSWORD_MIN_LENGTH; see config). */
export interface AccountPolicy {
  lockoutFailures: number;
  lockoutMinutes: number;
  passwordRule: PasswordRule;
}

export const DEFAULT_ACCOUNT_POLICY: AccountPolicy = Object.freeze({
  lockoutFailures: LOCKOUT_FAILURES,
  lockoutMinutes: LOCKOUT_MINUTES,
  passwordRule: DEFAULT_PASSWORD_RULE,
});

/** Attempts (logins and password changes together) per account, and per address, in ATTEMPT_WINDOW_MS. */
export const ATTEMPTS_PER_WINDOW = 10;
export const ATTEMPT_WINDOW_MS = 60_000;

/** Lifetime of an access token from login: one day. Logout or a password change ends it sooner. */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

/** Whether a temporary lockout is still running at `now`. */
export function isLockedOut(lockedUntil: Date | null, now: Date): boolean {
  return lockedUntil !== null && lockedUntil.getTime() > now.getTime();
}
