import { hashPlainPassword, type StoredPassword } from '../accounts/passwords.ts';
import { type PasswordRule, passwordProblem } from '../accounts/rules.ts';
import { signAccessToken, type TokenKind } from '../crypto/tokens.ts';
import { formatDateTime } from '../dates.ts';
import { assertNoProblems } from '../errors.ts';
import type { Scope } from '../principal.ts';
import type { AccountStore } from './accounts.ts';
import { authenticate } from './authenticate.ts';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from './policy.ts';

/*
 * The steps login and password change share between users and administrators: check the account,
 * then record the success (and issue a token) or set the new password.
 */

export interface Issued<R> {
  row: R;
  accessToken: string;
  /** `yyyy-MM-dd HH:mm:ss` in the service's zone, as every date of the contract. */
  expiresAt: string;
}

type Account = { id: number; tokenVersion: number } & StoredPassword;

/** Records a successful login of `row` and issues its access token. */
export async function startSession<R extends Account>(
  store: AccountStore<R>,
  row: R,
  token: { kind: TokenKind; scopes: readonly Scope[]; secret: string },
  now: Date,
): Promise<Issued<R>> {
  const updated = await store.succeeded(row.id, now);
  const signed = signAccessToken(
    { id: updated.id, kind: token.kind, scopes: token.scopes, version: updated.tokenVersion },
    token.secret,
    { expiresIn: ACCESS_TOKEN_LIFETIME_SECONDS, now },
  );
  return { row: updated, accessToken: signed.token, expiresAt: formatDateTime(signed.expiresAt) };
}

export async function loginWithPassword<R extends Account>(
  store: AccountStore<R>,
  credentials: { account: string; password: string },
  token: { kind: TokenKind; scopes: readonly Scope[]; secret: string },
  now: Date = new Date(),
): Promise<Issued<R>> {
  const row = await authenticate(store, credentials.account, credentials.password, now);
  return startSession(store, row, token, now);
}

export interface PasswordChange {
  account: string;
  /** MD5 hex of the current password. */
  password: string;
  /** The new password in plain text. */
  newPassword: string;
}

/**
 * Changes the password of the account named, after checking its current one like a login does.
 * The new password's rule is checked first: a weak one is refused without touching the account.
 */
export async function changePassword<R extends Account>(
  store: AccountStore<R>,
  change: PasswordChange,
  rule: PasswordRule,
  now: Date = new Date(),
): Promise<R> {
  const weak = passwordProblem(change.newPassword, rule);
  assertNoProblems(weak === undefined ? [] : [{ field: 'newPassword', message: weak }]);
  const row = await authenticate(store, change.account, change.password, now);
  return store.changePassword(row.id, await hashPlainPassword(change.newPassword), now);
}
