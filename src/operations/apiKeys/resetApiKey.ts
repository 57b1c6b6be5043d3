import { resetApiKey as renew } from '../../domain/apiKeys/manage.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

export const resetApiKey: Handler<'resetApiKey'> = async ({ path, header, principal }, { db, reply }) => {
  const { record, version } = await renew(db, principal, path.id, parseIfMatch(header['If-Match']));
  return reply(withETag(record, version));
};
