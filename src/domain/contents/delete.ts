import type { Db } from '../../db/client.ts';
import { notFound } from '../errors.ts';
import { placeOf, recordEvent } from '../events/record.ts';
import { requireChannel, requireSite } from '../records.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import { contentNavigationUrl } from '../urls.ts';
import { type ContentFormBDeleted, toContentFormBDeleted } from './forms.ts';

/**
 * Move a content to the recycle bin. It keeps every field (it can be restored), but from now on
 * every read and write of it answers 404.
 */
export async function deleteContent(
  db: Db,
  target: { siteId: number; channelId: number; id: number },
): Promise<ContentFormBDeleted> {
  const site = await requireSite(db, target.siteId);
  const channel = await requireChannel(db, target.siteId, target.channelId);
  const recycled = await db.$transaction(async (tx) => {
    const { count } = await tx.content.updateMany({
      where: { id: target.id, siteId: target.siteId, channelId: target.channelId, recycled: false },
      data: { recycled: true, recycledDate: new Date() },
    });
    if (count === 0) return null;
    await recordEvent(tx, { type: 'content.deleted', resourceId: target.id, ...placeOf(target) });
    return tx.content.findUnique({ where: { id: target.id } });
  });
  if (!recycled) {
    throw notFound(
      `Content ${target.id} does not exist in channel ${target.channelId} of site ${target.siteId}`,
    );
  }
  const navigationUrl = contentNavigationUrl(
    recycled,
    channel,
    readSiteAttributes(site.attributes).contentFilePathRule,
  );
  return toContentFormBDeleted(recycled, navigationUrl);
}
