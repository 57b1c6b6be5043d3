import { randomBytes } from 'node:crypto';
import { hashPlainPassword, type StoredPassword, verifyMd5Password } from '../accounts/passwords.ts';
import { DomainError } from '../errors.ts';
import type { AccountStore } from './accounts.ts';
import { isLockedOut } from './policy.ts';

/*
 * Checking an account and the MD5 of its password, for login and password change. Every way to
 * fail — unknown account, wrong password, unapproved or locked account, lockout — is the same error
 * and costs the same key derivation (a dummy one when the account does not exist), so neither the
 * answer nor its timing tells whether an account exists.
 */

export const LOGIN_FAILED_MESSAGE = 'Wrong account or password, or the account cannot log in now';

export const loginFailed = () => new DomainError('login-failed', LOGIN_FAILED_MESSAGE);

// Made once and never changed: a password nobody knows, the same for every database.
let dummy: Promise<StoredPassword> | undefined;

/** A stored password nobody knows, derived with the same parameters as real ones. */
function dummyPassword(): Promise<StoredPassword> {
  dummy ??= hashPlainPassword(randomBytes(16).toString('hex'));
  return dummy;
}

/**
 * The account, when it exists, may log in now and `md5Password` is its password. A wrong password
 * is recorded on the account; the lockout counts every refusal (attempts.ts).
 */
export async function authenticate<R extends { id: number } & StoredPassword>(
  store: AccountStore<R>,
  account: string,
  md5Password: string,
  now: Date,
): Promise<R> {
  const row = await store.find(account);
  const matches = await verifyMd5Password(md5Password, row ?? (await dummyPassword()));
  if (row === null) throw loginFailed();
  if (!matches) {
    await store.failed(row.id);
    throw loginFailed();
  }
  if (store.blocked(row) || isLockedOut(store.lockedUntil(row), now)) throw loginFailed();
  return row;
}
