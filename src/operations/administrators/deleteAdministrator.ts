import { deleteAdministrator as remove } from '../../domain/administrators/manage.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

export const deleteAdministrator: Handler<'deleteAdministrator'> = ({ path, header, principal }, { db }) =>
  remove(db, principal, path.id, parseIfMatch(header['If-Match']));
