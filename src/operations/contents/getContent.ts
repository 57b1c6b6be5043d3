import { readsAsMember } from '../../domain/access.ts';
import { toContentFormA } from '../../domain/contents/forms.ts';
import { notFound } from '../../domain/errors.ts';
import { requireContent } from '../../domain/records.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

/** The record's strong ETag; If-None-Match is answered 304 by the dispatcher (src/http/routes.ts). */
export const getContent: Handler<'getContent'> = async ({ path, principal }, { db, reads, reply }) => {
  const content = await requireContent(db, path.siteId, path.channelId, path.id, reads);
  // To a site member an unapproved content does not exist.
  if (!content.checked && readsAsMember(principal)) {
    throw notFound(`Content ${path.id} does not exist in channel ${path.channelId} of site ${path.siteId}`);
  }
  return reply(withETag(toContentFormA(content), content.version));
};
