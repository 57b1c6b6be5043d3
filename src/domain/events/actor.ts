import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from '../principal.ts';

/**
 * Who an event says made the write. Carried beside the call (not through every write's parameters)
 * so that any write, whoever adds it, records its caller with one call: the dispatcher runs each
 * operation inside `withActor`, and writes made outside a request (CLI, background) are `system`.
 */
export type Actor =
  | { type: 'apiKey' | 'administrator' | 'user'; id: number }
  | { type: 'anonymous' | 'system'; id: null };

const current = new AsyncLocalStorage<Actor>();

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

export function withActor<T>(actor: Actor, run: () => T): T {
  return current.run(actor, run);
}

export function currentActor(): Actor {
  return current.getStore() ?? { type: 'system', id: null };
}
