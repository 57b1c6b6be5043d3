import { deleteApiKey as remove } from '../../domain/apiKeys/manage.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

export const deleteApiKey: Handler<'deleteApiKey'> = ({ path, header, principal }, { db }) =>
  remove(db, principal, path.id, parseIfMatch(header['If-Match']));
