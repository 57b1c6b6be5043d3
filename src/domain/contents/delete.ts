import type { Db } from '../../db/client.ts';
import { writeTransaction } from '../../db/transaction.ts';
import { notFound } from '../errors.ts';
import type { Actor } from '../events/actor.ts';
import { placeOf, recordEvent } from '../events/record.ts';
import { requireChannel, requireSite } from '../records.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import { contentNavigationUrl } from '../urls.ts';
import { type Precondition, refuseUnlessMissing, versionFilter } from '../versions.ts';
import { type ContentFormBDeleted, toContentFormBDeleted } from './forms.ts';

/**
 * Move a content to the recycle bin. It keeps every field (it can be restored), but from now on
 * every read and write of it answers 404.
 */
export async function deleteContent(
  db: Db,
  target: { siteId: number; channelId: number; id: number },
  actor: Actor,
  precondition?: Precondition,
): Promise<ContentFormBDeleted> {
  const site = await requireSite(db, target.siteId);
  const channel = await requireChannel(db, target.siteId, target.channelId);
  const recycled = await writeTransaction(db, async (tx) => {
    const where = { id: target.id, siteId: target.siteId, channelId: target.channelId, recycled: false };
    const { count } = await tx.content.updateMany({
      where: { ...where, ...versionFilter(precondition) },
      data: { recycled: true, recycledDate: new Date(), version: { increment: 1 } },
    });
    if (count === 0)
      return refuseUnlessMissing(`Content ${target.id}`, precondition, () =>
        tx.content.findFirst({ where, select: { version: true } }),
      );
    await recordEvent(tx, { type: 'content.deleted', resourceId: target.id, ...placeOf(target), actor });
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
