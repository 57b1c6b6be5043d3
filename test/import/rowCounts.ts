import type { Db } from '../../src/db/client.ts';

/** Rows of every table an import writes: what a failed import must leave unchanged. */
export async function rowCounts(db: Db) {
  return {
    sites: await db.site.count(),
    channels: await db.channel.count(),
    contents: await db.content.count(),
    users: await db.user.count(),
    administrators: await db.administrator.count(),
    apiKeys: await db.apiKey.count(),
  };
}
