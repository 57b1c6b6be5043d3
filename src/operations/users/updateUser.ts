import { updateUser as update } from '../../domain/users/manage.ts';
import type { Handler } from '../types.ts';

export const updateUser: Handler<'updateUser'> = ({ path, body, principal }, { db, config }) =>
  update(db, principal, path.id, body, config.accounts);
