import type { Handler } from '../types.ts';

/** Sent as text/plain: the original system answers a bare `pong`. */
export const ping: Handler<'ping'> = async () => 'pong';
