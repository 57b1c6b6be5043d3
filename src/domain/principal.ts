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
