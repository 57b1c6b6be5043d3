import { deleteUser as remove } from '../../domain/users/manage.ts';
import type { Handler } from '../types.ts';

export const deleteUser: Handler<'deleteUser'> = ({ path }, { db }) => remove(db, path.id);
