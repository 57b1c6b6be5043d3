import type { Handler } from '../types.ts';

/** Liveness: answering at all is the signal, so it touches nothing that could be slow or down. */
export const healthz: Handler<'healthz'> = async () => ({ status: 'ok' });
