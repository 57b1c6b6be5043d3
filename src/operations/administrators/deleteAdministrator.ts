import { deleteAdministrator as remove } from '../../domain/administrators/manage.ts';
import type { Handler } from '../types.ts';

export const deleteAdministrator: Handler<'deleteAdministrator'> = ({ path, principal }, { db }) =>
  remove(db, principal, path.id);
