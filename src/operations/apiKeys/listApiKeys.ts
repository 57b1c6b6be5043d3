import { listApiKeys as readApiKeys } from '../../domain/apiKeys/manage.ts';
import type { Handler } from '../types.ts';

export const listApiKeys: Handler<'listApiKeys'> = async (_input, { db }) => ({
  value: await readApiKeys(db),
});
