import { getAdministrator as get } from '../../domain/administrators/manage.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

/** The record's strong ETag; If-None-Match is answered 304 by the dispatcher (src/http/routes.ts). */
export const getAdministrator: Handler<'getAdministrator'> = async ({ path }, { db, reply }) => {
  const { record, version } = await get(db, path.idOrName);
  return reply(withETag(record, version));
};
