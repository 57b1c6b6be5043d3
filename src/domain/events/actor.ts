import type { Principal } from '../principal.ts';

/**
 * Who an event says made the write. Each write is handed it by its caller: an operation passes its
 * principal's (`actorOf`), and writes made outside a request (CLI, background work) pass
 * `SYSTEM_ACTOR`. It used to travel beside the call in an AsyncLocalStorage, whose promise hooks
 * cost every request of the process on Node.js 20 and 22 (bench/README.md, "AsyncLocalStorage's
 * price").
 */
export type Actor =
  | { type: 'apiKey' | 'administrator' | 'user'; id: number }
  | { type: 'anonymous' | 'system'; id: null };

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null };

export function actorOf(principal: Principal): Actor {
  switch (principal.kind) {
    case 'apiKey':
      return { type: 'apiKey', id: principal.apiKeyId };
    case 'administrator':
      return { type: 'administrator', id: principal.administratorId };
    case 'user':
      return { type: 'user', id: principal.userId };
    default:
      return { type: 'anonymous', id: null };
  }
}
