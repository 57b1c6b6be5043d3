import { clearCaches } from '../../domain/system/caches.ts';
import type { Handler } from '../types.ts';

/**
 * Nodes cache credentials only with Redis (src/http/app.ts); the dispatcher then advances the
 * credentials generation after this answer is made (`x-changes-credentials`), which drops every
 * node's entries.
 */
export const clearCache: Handler<'clearCache'> = async (_input, { db, state, actor }) => ({
  value: true,
  cleared: await clearCaches(db, state.kind === 'redis', actor),
});
