import { getChannel as readChannel } from '../../domain/channels/read.ts';
import { strongETag } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

/** The channel's strong ETag; If-None-Match is answered 304 by the dispatcher (src/http/routes.ts). */
export const getChannel: Handler<'getChannel'> = async ({ path }, { db, reply }) => {
  const { channel, version } = await readChannel(db, path.siteId, path.channelId);
  return reply({
    status: 200,
    headers: { ETag: strongETag(version) },
    mediaType: 'application/json',
    body: channel,
  });
};
