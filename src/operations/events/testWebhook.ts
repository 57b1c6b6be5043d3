import { queueTestEvent } from '../../domain/events/deliveries.ts';
import type { Handler } from '../types.ts';

export const testWebhook: Handler<'testWebhook'> = async ({ path }, { db, actor, reply }) =>
  reply({ status: 202, mediaType: 'application/json', body: await queueTestEvent(db, path.id, actor) });
