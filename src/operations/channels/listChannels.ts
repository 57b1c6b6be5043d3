import { listChannelsText } from '../../domain/channels/list.ts';
import type { Handler } from '../types.ts';

/** The list's text with its weak ETag; If-None-Match is answered 304 by the dispatcher (src/http/routes.ts). */
export const listChannels: Handler<'listChannels'> = async ({ path }, { db, reads, reply }) => {
  const { text, etag } = await listChannelsText(db, reads, path.siteId);
  return reply({ status: 200, headers: { ETag: etag }, mediaType: 'application/json', body: text });
};
