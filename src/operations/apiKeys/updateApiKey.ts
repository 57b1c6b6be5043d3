import { updateApiKey as change } from '../../domain/apiKeys/manage.ts';
import type { Handler } from '../types.ts';

export const updateApiKey: Handler<'updateApiKey'> = ({ path, body, principal }, { db }) =>
  change(db, principal, path.id, body);
