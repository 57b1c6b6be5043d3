import { getWebhook as readWebhook } from '../../domain/events/subscriptions.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

/** The record's strong ETag; If-None-Match is answered 304 by the dispatcher (src/http/routes.ts). */
export const getWebhook: Handler<'getWebhook'> = async ({ path }, { db, reply }) => {
  const { record, version } = await readWebhook(db, path.id);
  return reply(withETag(record, version));
};
