import { cmsMessage } from './messages.ts';

/** A reason the service cannot start, already one sentence for the operator (no stack, no secret). */
export class StartFailure extends Error {
  override name = 'StartFailure';
}

/**
 * A worker that cannot start (every worker meets the same port in use) tells its supervisor why
 * instead of printing it, so that the operator reads the sentence once.
 */
export interface StartFailedMessage {
  cms: 'startFailed';
  reason: string;
}

export function startFailedReason(message: unknown): string | undefined {
  const reason = cmsMessage(message, 'startFailed')?.reason;
  return typeof reason === 'string' ? reason : undefined;
}
