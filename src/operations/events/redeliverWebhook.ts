import { redeliver } from '../../domain/events/deliveries.ts';
import type { Handler } from '../types.ts';

export const redeliverWebhook: Handler<'redeliverWebhook'> = async ({ path }, { db, reply }) =>
  reply({ status: 202, mediaType: 'application/json', body: await redeliver(db, path.id, path.deliveryId) });
