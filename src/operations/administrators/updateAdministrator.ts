import { updateAdministrator as update } from '../../domain/administrators/update.ts';
import type { Handler } from '../types.ts';

export const updateAdministrator: Handler<'updateAdministrator'> = (
  { path, body, principal },
  { db, config },
) => update(db, principal, path.id, body, config.accounts.passwordRule);
