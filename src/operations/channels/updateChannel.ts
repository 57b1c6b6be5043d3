import { updateChannel as applyChannelUpdate } from '../../domain/channels/update.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

/** A request without a body changes nothing but the modification date, like an empty object. */
export const updateChannel: Handler<'updateChannel'> = async (
  { path, body, header },
  { db, actor, reply },
) => {
  const { channel, version } = await applyChannelUpdate(
    db,
    path,
    body ?? {},
    actor,
    parseIfMatch(header['If-Match']),
  );
  return reply(withETag(channel, version));
};
