/*
 * Messages between the supervisor and its workers (node:cluster's IPC channel) are objects whose
 * `cms` field names their kind; anything else on the channel (node's own, a library's) is not ours.
 */

/** The message's fields when it is this service's message of that kind, else undefined. */
export function cmsMessage(message: unknown, kind: string): Record<string, unknown> | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const fields = message as Record<string, unknown>;
  return fields.cms === kind ? fields : undefined;
}
