import { createChannel as addChannel } from '../../domain/channels/create.ts';
import type { Handler } from '../types.ts';

/** 200 with the record, as the original system answers this route, and where to read it again. */
export const createChannel: Handler<'createChannel'> = async ({ path, body }, { db, actor, reply }) => {
  const channel = await addChannel(db, path.siteId, body, actor);
  return reply({
    status: 200,
    headers: { Location: `/api/v1/channels/${channel.siteId}/${channel.id}` },
    mediaType: 'application/json',
    body: channel,
  });
};
