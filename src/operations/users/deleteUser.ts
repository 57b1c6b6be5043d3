import { deleteUser as remove } from '../../domain/users/manage.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

export const deleteUser: Handler<'deleteUser'> = ({ path, header }, { db, actor }) =>
  remove(db, path.id, actor, parseIfMatch(header['If-Match']));
