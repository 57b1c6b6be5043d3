import { updateUser as update } from '../../domain/users/manage.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

export const updateUser: Handler<'updateUser'> = async (
  { path, body, header, principal },
  { db, state, config, reply },
) => {
  const { record, version } = await update(
    db,
    state,
    principal,
    path.id,
    body,
    config.accounts,
    parseIfMatch(header['If-Match']),
  );
  return reply(withETag(record, version));
};
