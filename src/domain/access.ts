import { forbidden } from './errors.ts';
import { type Principal, SCOPES, type Scope } from './principal.ts';

/*
 * Who may call what, decided in one place from the operation's requirement (read from the
 * contract) and the principal (resolved once per request), and the one rule that keeps managing
 * accounts from being a way to more power (docs/security/credentials.md).
 *
 * An API key carries the scopes it was given; an administrator's token carries every scope. A
 * user's token is a site member's: it reads approved contents and channels (MEMBER_OPERATIONS) and
 * its own account, and reaches nothing else unless the operator grants it scopes
 * (USER_TOKEN_SCOPES, at most those of USER_GRANTABLE_SCOPES), so a user never reaches the
 * administration of users, administrators, keys or the system.
 */

/**
 * `principals`, when present, names the kinds of caller the operation is for (the contract's
 * `x-principals`: a logout is for a token of its own kind); the scopes apply as well.
 */
export type Requirement = { scopes: readonly string[]; principals?: readonly string[] } | 'public';

/** The most an operator may let a user's token carry (USER_TOKEN_SCOPES). */
export const USER_GRANTABLE_SCOPES: readonly Scope[] = ['Contents', 'Channels', 'STL'];

/** What a site member's token may call without any granted scope: reads, of approved contents only. */
export const MEMBER_OPERATIONS: ReadonlySet<string> = new Set(['listContents', 'getContent', 'getChannel']);

/**
 * Operations on one account that a user's token may call for its own account (the operation itself
 * refuses another's: 403), whatever scopes it was granted.
 */
export const OWN_ACCOUNT_OPERATIONS: ReadonlySet<string> = new Set(['uploadUserAvatar']);

/** The scopes of the operations a member may call, for the rule on who may give an account a password. */
const MEMBER_READ_SCOPES: readonly Scope[] = ['Contents', 'Channels'];

export function grantedScopes(principal: Principal): ReadonlySet<Scope> {
  switch (principal.kind) {
    case 'anonymous':
      return new Set();
    case 'administrator':
      return new Set(SCOPES);
    case 'user':
      return new Set(USER_GRANTABLE_SCOPES.filter((scope) => principal.scopes.has(scope)));
    case 'apiKey':
      return principal.scopes;
  }
}

const CALLERS: Readonly<Record<string, string>> = {
  user: "a user's access token",
  administrator: "an administrator's access token",
  apiKey: 'an API key',
};

function callersOf(kinds: readonly string[]): string {
  return kinds.map((kind) => CALLERS[kind] ?? kind).join(' or ');
}

/**
 * Whether a user's token reads contents as a member does (approved ones only): it was granted no
 * `Contents` scope of its own.
 */
export function readsAsMember(principal: Principal): boolean {
  return principal.kind === 'user' && !grantedScopes(principal).has('Contents');
}

/** Throws a `forbidden` DomainError naming what is missing; returns when access is granted. */
export function assertMayCall(requirement: Requirement, principal: Principal, operationId?: string): void {
  if (requirement === 'public') return;
  if (requirement.principals !== undefined && !requirement.principals.includes(principal.kind)) {
    throw forbidden(
      `These credentials cannot reach this operation: it is for ${callersOf(requirement.principals)}`,
    );
  }
  const granted = grantedScopes(principal);
  const missing = requirement.scopes.filter((scope) => !granted.has(scope as Scope));
  if (missing.length === 0) return;
  if (
    principal.kind === 'user' &&
    operationId !== undefined &&
    (MEMBER_OPERATIONS.has(operationId) || OWN_ACCOUNT_OPERATIONS.has(operationId))
  )
    return;
  const names = missing.map((scope) => `'${scope}'`).join(', ');
  if (principal.kind === 'user') {
    throw forbidden(
      `A user's access token cannot reach this operation: it needs ${names}, which a site member's token does not carry`,
    );
  }
  throw forbidden(`The credentials do not carry the ${names} scope this operation needs`);
}

/** Every scope the token of such an account can carry (a user's: under the operator's settings). */
export type Account = { kind: 'administrator' } | { kind: 'user'; userTokenScopes: readonly Scope[] };

export function accountTokenScopes(account: Account): readonly Scope[] {
  if (account.kind === 'administrator') return SCOPES;
  return [...new Set([...MEMBER_READ_SCOPES, ...account.userTokenScopes])];
}

/**
 * The rule of every operation that sets or resets another account's credentials or unlocks it
 * (or creates an account with a password): the caller must already hold every scope that account's
 * token would carry, so that managing accounts never leads to a credential with more power than the
 * caller's own. An administrator's token, or a key with every scope, may manage administrators; a
 * key with `Users` alone may not give a user a password unless it also carries what a user's token
 * reads. Throws `forbidden` (403) otherwise.
 */
export function assertMayGrantAccount(principal: Principal, account: Account, what: string): void {
  const granted = grantedScopes(principal);
  const missing = accountTokenScopes(account).filter((scope) => !granted.has(scope));
  if (missing.length === 0) return;
  const names = missing.map((scope) => `'${scope}'`).join(', ');
  throw forbidden(
    `${what} would hand over a ${account.kind}'s access, which carries ${names}: these credentials do not carry that scope`,
  );
}
