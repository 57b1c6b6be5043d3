/** Scope names, from the original system; a key with all of them is the bootstrap key. */
export const SCOPES = [
  'Contents',
  'Channels',
  'STL',
  'Users',
  'Administrators',
  'Others',
  /** Management of API keys (create, list, change, delete, reset). */
  'ApiKeys',
  /** Management of webhook subscriptions and their deliveries (docs/api/events.md). */
  'Webhooks',
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(name: string): name is Scope {
  return (SCOPES as readonly string[]).includes(name);
}

/** Who is calling, as established by the security handlers. */
export type Principal =
  | { kind: 'anonymous' }
  | { kind: 'apiKey'; apiKeyId: number; scopes: ReadonlySet<Scope> }
  | { kind: 'administrator'; administratorId: number; scopes: ReadonlySet<Scope> }
  | { kind: 'user'; userId: number; scopes: ReadonlySet<Scope> };

/**
 * A stable name for who a principal is ("apiKey:3", "user:7", "anonymous"), for what is kept per
 * caller: a share of the SQL sandbox, the idempotency keys a caller sent.
 */
export function principalName(principal: Principal): string {
  switch (principal.kind) {
    case 'apiKey':
      return `apiKey:${principal.apiKeyId}`;
    case 'administrator':
      return `administrator:${principal.administratorId}`;
    case 'user':
      return `user:${principal.userId}`;
    case 'anonymous':
      return 'anonymous';
  }
}
