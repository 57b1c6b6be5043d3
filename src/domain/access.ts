import { forbidden } from './errors.ts';
import { type Principal, SCOPES, type Scope } from './principal.ts';

/*
 * Who may call what, decided in one place from the operation's requirement (read from the
 * contract) and the principal (resolved once per request). An API key carries the scopes it was
 * given; an administrator's token carries every scope; a user's token carries at most the scopes a
 * site member may have, whatever it claims, so a user never reaches the administration of users,
 * administrators, keys or the system.
 */

/**
 * `principals`, when present, names the kinds of caller the operation is for (the contract's
 * `x-principals`: a logout is for a token of its own kind); the scopes apply as well.
 */
export type Requirement = { scopes: readonly string[]; principals?: readonly string[] } | 'public';

/** The most a user's token can grant. */
export const USER_SCOPES: readonly Scope[] = ['Contents', 'Channels', 'STL'];

export function grantedScopes(principal: Principal): ReadonlySet<Scope> {
  switch (principal.kind) {
    case 'anonymous':
      return new Set();
    case 'administrator':
      return new Set(SCOPES);
    case 'user':
      return new Set(USER_SCOPES.filter((scope) => principal.scopes.has(scope)));
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

/** Throws a `forbidden` DomainError naming what is missing; returns when access is granted. */
export function assertMayCall(requirement: Requirement, principal: Principal): void {
  if (requirement === 'public') return;
  if (requirement.principals !== undefined && !requirement.principals.includes(principal.kind)) {
    throw forbidden(
      `These credentials cannot reach this operation: it is for ${callersOf(requirement.principals)}`,
    );
  }
  const granted = grantedScopes(principal);
  const missing = requirement.scopes.filter((scope) => !granted.has(scope as Scope));
  if (missing.length === 0) return;
  const names = missing.map((scope) => `'${scope}'`).join(', ');
  if (principal.kind === 'user' && missing.some((scope) => !USER_SCOPES.includes(scope as Scope))) {
    throw forbidden(
      `A user's access token cannot reach this operation: it needs ${names}, which only API keys and administrators carry`,
    );
  }
  throw forbidden(`The credentials do not carry the ${names} scope this operation needs`);
}
