import { updateChannel as applyChannelUpdate } from '../../domain/channels/update.ts';
import { parseIfMatch, strongETag } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

/** A request without a body changes nothing but the modification date, like an empty object. */
export const updateChannel: Handler<'updateChannel'> = async ({ path, body, header }, { db, reply }) => {
  const { channel, version } = await applyChannelUpdate(
    db,
    path,
    body ?? {},
    parseIfMatch(header['If-Match']),
  );
  return reply({
    status: 200,
    headers: { ETag: strongETag(version) },
    mediaType: 'application/json',
    body: channel,
  });
};
