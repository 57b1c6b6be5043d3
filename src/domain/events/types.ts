/*
 * The event types the service records (docs/api/events.md lists them): `<resource>.<change>`.
 * Subscriptions name these or a wildcard (`content.*`, `*`).
 */
export const EVENT_TYPES = [
  'content.created',
  'content.updated',
  'content.deleted',
  'content.restored',
  'content.checked',
  'channel.created',
  'channel.updated',
  'channel.deleted',
  'user.created',
  'user.updated',
  'user.deleted',
  'user.passwordChanged',
  'user.locked',
  'user.avatarChanged',
  'administrator.created',
  'administrator.updated',
  'administrator.deleted',
  'administrator.passwordChanged',
  'administrator.locked',
  'apiKey.created',
  'apiKey.updated',
  'apiKey.reset',
  'apiKey.deleted',
  'system.restarted',
  'system.cacheCleared',
  /** Sent only by the "send a test event" operation, never recorded as activity. */
  'webhook.test',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export type ResourceType = EventType extends `${infer R}.${string}` ? R : never;

export function resourceTypeOf(type: EventType): ResourceType {
  return type.slice(0, type.indexOf('.')) as ResourceType;
}

/** Whether a subscription's pattern (`content.updated`, `content.*`, `*`) matches an event type. */
export function typeMatches(pattern: string, type: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}

/** A pattern a subscription may carry: a known type, `<resource>.*` of a known resource, or `*`. */
export function isEventPattern(pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return EVENT_TYPES.some((type) => typeMatches(pattern, type));
  return (EVENT_TYPES as readonly string[]).includes(pattern);
}
