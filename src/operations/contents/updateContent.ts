import { updateContent as applyContentUpdate } from '../../domain/contents/update.ts';
import { parseIfMatch, strongETag } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

/** A request without a body changes nothing but the modification dates, like an empty object. */
export const updateContent: Handler<'updateContent'> = async ({ path, body, header }, { db, reply }) => {
  const { content, version } = await applyContentUpdate(
    db,
    path,
    body ?? {},
    parseIfMatch(header['If-Match']),
  );
  return reply({
    status: 200,
    headers: { ETag: strongETag(version) },
    mediaType: 'application/json',
    body: content,
  });
};
