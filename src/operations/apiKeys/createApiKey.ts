import { createApiKey as issue } from '../../domain/apiKeys/manage.ts';
import type { Handler } from '../types.ts';

export const createApiKey: Handler<'createApiKey'> = async ({ body, principal }, { db, reply }) =>
  reply({ status: 201, mediaType: 'application/json', body: await issue(db, principal, body) });
