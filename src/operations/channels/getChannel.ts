import { getChannel as readChannel } from '../../domain/channels/read.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

/** The channel's strong ETag; If-None-Match is answered 304 by the dispatcher (src/http/routes.ts). */
export const getChannel: Handler<'getChannel'> = async ({ path }, { db, reply }) => {
  const { channel, version } = await readChannel(db, path.siteId, path.channelId);
  return reply(withETag(channel, version));
};
