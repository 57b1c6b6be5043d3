import { resetApiKey as renew } from '../../domain/apiKeys/manage.ts';
import type { Handler } from '../types.ts';

export const resetApiKey: Handler<'resetApiKey'> = ({ path, principal }, { db }) =>
  renew(db, principal, path.id);
