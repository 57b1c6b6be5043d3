import type { Db, DbHandle } from '../db/client.ts';
import type { Channel, Content, Site } from '../db/models.ts';
import { notFound } from './errors.ts';

/*
 * Lookups of the records a path names. Ids that do not belong together (a content of another
 * channel, a channel of another site) are answered exactly like a missing record, and so is a
 * content in the recycle bin.
 */

export async function requireSite(db: Db, siteId: number): Promise<Site> {
  const site = await db.site.findUnique({ where: { id: siteId } });
  if (!site) throw notFound(`Site ${siteId} does not exist`);
  return site;
}

export async function requireChannel(db: Db, siteId: number, channelId: number): Promise<Channel> {
  const channel = await db.channel.findFirst({ where: { id: channelId, siteId } });
  if (!channel) throw notFound(`Channel ${channelId} does not exist in site ${siteId}`);
  return channel;
}

export async function requireContent(
  db: Db,
  siteId: number,
  channelId: number,
  id: number,
  /** The client's point reads, for get-one's hot read (never a transaction's): the same row either way. */
  reads?: DbHandle['reads'],
): Promise<Content> {
  const content = reads
    ? await reads.content(id, siteId, channelId)
    : await db.content.findFirst({ where: { id, siteId, channelId, recycled: false } });
  if (!content) throw notFound(`Content ${id} does not exist in channel ${channelId} of site ${siteId}`);
  return content;
}
