import { getUser as get } from '../../domain/users/manage.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

/** The record's strong ETag; If-None-Match is answered 304 by the dispatcher (src/http/routes.ts). */
export const getUser: Handler<'getUser'> = async ({ path, query }, { db, reply }) => {
  const { record, version } = await get(db, path.account, query.by);
  return reply(withETag(record, version));
};
