import { readsAsMember } from '../../domain/access.ts';
import { toContentFormA } from '../../domain/contents/forms.ts';
import { notFound } from '../../domain/errors.ts';
import { requireContent } from '../../domain/records.ts';
import { strongETag } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

/** The record's strong ETag; If-None-Match is answered 304 by the dispatcher (src/http/routes.ts). */
export const getContent: Handler<'getContent'> = async ({ path, principal }, { db, reply }) => {
  const content = await requireContent(db, path.siteId, path.channelId, path.id);
  // To a site member an unapproved content does not exist.
  if (!content.checked && readsAsMember(principal)) {
    throw notFound(`Content ${path.id} does not exist in channel ${path.channelId} of site ${path.siteId}`);
  }
  return reply({
    status: 200,
    headers: { ETag: strongETag(content.version) },
    mediaType: 'application/json',
    body: toContentFormA(content),
  });
};
