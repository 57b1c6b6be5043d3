import { deleteApiKey as remove } from '../../domain/apiKeys/manage.ts';
import type { Handler } from '../types.ts';

export const deleteApiKey: Handler<'deleteApiKey'> = ({ path, principal }, { db }) =>
  remove(db, principal, path.id);
