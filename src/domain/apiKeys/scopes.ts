import { isScope, SCOPES, type Scope } from '../principal.ts';

/*
 * A key's scopes are stored comma-joined in one column (as the original system did). These two
 * functions are the only readers and writers of that form.
 */

/** The scopes of a stored key; names that are no longer scopes are dropped. */
export function parseScopes(joined: string): Set<Scope> {
  return new Set(
    joined
      .split(',')
      .map((name) => name.trim())
      .filter(isScope),
  );
}

/** The stored form: each scope once, in the order of SCOPES, so equal sets are equal strings. */
export function joinScopes(scopes: Iterable<Scope>): string {
  const wanted = new Set(scopes);
  return SCOPES.filter((scope) => wanted.has(scope)).join(',');
}
