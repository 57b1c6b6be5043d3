import { updateAdministrator as update } from '../../domain/administrators/update.ts';
import type { Handler } from '../types.ts';

export const updateAdministrator: Handler<'updateAdministrator'> = ({ path, body }, { db, config }) =>
  update(db, path.id, body, config.accounts.passwordRule);
