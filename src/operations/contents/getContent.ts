import { toContentFormA } from '../../domain/contents/forms.ts';
import { requireContent } from '../../domain/records.ts';
import { strongETag } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

/** The record's strong ETag; If-None-Match is answered 304 by the dispatcher (src/http/routes.ts). */
export const getContent: Handler<'getContent'> = async ({ path }, { db, reply }) => {
  const content = await requireContent(db, path.siteId, path.channelId, path.id);
  return reply({
    status: 200,
    headers: { ETag: strongETag(content.version) },
    mediaType: 'application/json',
    body: toContentFormA(content),
  });
};
