import { updateAdministrator as update } from '../../domain/administrators/update.ts';
import type { Handler } from '../types.ts';

export const updateAdministrator: Handler<'updateAdministrator'> = ({ path, body }, { db }) =>
  update(db, path.id, body);
