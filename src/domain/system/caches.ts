import type { Db } from '../../db/client.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { Actor } from '../events/actor.ts';
import { recordEvent } from '../events/record.ts';

/*
 * The caches the service keeps that can be dropped without losing anything: each is rebuilt by the
 * next request that needs it. The per-channel tallies and labels are not among them: they are exact
 * data the database's triggers keep, and rebuilding them would mean counting every content again.
 */

/**
 * How far clearCache moves every site's generation. After a restored backup a site's generation is
 * behind what the nodes kept pages under, and its next writes would bring it back to those values;
 * a leap past every value a node can have seen since keeps a kept page from ever matching again.
 */
export const GENERATION_LEAP = 2n ** 32n;

/** A cache's name, as the clearCache operation answers it. */
export type CacheName = 'credentials' | 'contentCounts' | 'contentPages';

/**
 * Drops the stored totals and page marks of content-list filters, makes every node's kept list
 * pages and channel lists unusable (each is kept under its site's content generation, which is
 * advanced for every site), and records the action; answers what was dropped. `credentialsCached`
 * says whether any node caches credentials (with Redis only): the caller drops those on every node
 * by advancing the credentials generation.
 */
export async function clearCaches(db: Db, credentialsCached: boolean, actor: Actor): Promise<CacheName[]> {
  const cleared: CacheName[] = [
    ...(credentialsCached ? (['credentials'] as const) : []),
    'contentCounts',
    'contentPages',
  ];
  await writeTransaction(db, async (tx) => {
    const counts = await tx.contentCount.deleteMany({});
    await tx.contentGeneration.updateMany({ data: { generation: { increment: GENERATION_LEAP } } });
    await recordEvent(tx, {
      actor,
      type: 'system.cacheCleared',
      payload: { cleared: cleared.join(','), contentCounts: counts.count },
    });
  });
  return cleared;
}
