import { updateAdministrator as update } from '../../domain/administrators/update.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

export const updateAdministrator: Handler<'updateAdministrator'> = async (
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
