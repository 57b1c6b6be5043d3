import { updateApiKey as change } from '../../domain/apiKeys/manage.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

export const updateApiKey: Handler<'updateApiKey'> = async (
  { path, body, header, principal },
  { db, reply },
) => {
  const { record, version } = await change(db, principal, path.id, body, parseIfMatch(header['If-Match']));
  return reply(withETag(record, version));
};
