import { listDeliveries } from '../../domain/events/deliveries.ts';
import type { Handler } from '../types.ts';

export const listWebhookDeliveries: Handler<'listWebhookDeliveries'> = ({ path, query }, { db }) =>
  listDeliveries(db, path.id, query);
