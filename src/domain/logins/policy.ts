/*
 * The protection of logins and password changes (DESIGN "Authentication and scopes"), in one place
 * so that the README and the contract can state it and tests can drive it.
 */

/** Every this-many failed logins in a row lock the account for LOCKOUT_MINUTES. */
export const LOCKOUT_FAILURES = 5;
export const LOCKOUT_MINUTES = 15;

/** Attempts (logins and password changes together) per account, and per address, in ATTEMPT_WINDOW_MS. */
export const ATTEMPTS_PER_WINDOW = 10;
export const ATTEMPT_WINDOW_MS = 60_000;

/** Lifetime of an access token from login: one day. Logout or a password change ends it sooner. */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

/** Whether a temporary lockout is still running at `now`. */
export function isLockedOut(lockedUntil: Date | null, now: Date): boolean {
  return lockedUntil !== null && lockedUntil.getTime() > now.getTime();
}
