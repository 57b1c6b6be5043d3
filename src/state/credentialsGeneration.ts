import type { SharedState } from './port.ts';

/*
 * The credentials generation: a counter in the shared state that every change able to end a key or
 * a token advances (API operations and the command-line tool alike), and that every node's
 * credential cache checks its entries against (src/http/credentialCache.ts).
 */

export const GENERATION_KEY = 'credentials:generation';
/** The counter's window; a new window changes resetAt, so it is a new generation too. */
export const GENERATION_WINDOW_MS = 7 * 24 * 60 * 60_000;

/** Advances the generation: every credential cached on any node stops being used. */
export async function advanceCredentialsGeneration(state: SharedState): Promise<number> {
  return (await state.increment(GENERATION_KEY, GENERATION_WINDOW_MS)).count;
}
