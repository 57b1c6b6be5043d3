import { OutboundPolicy } from '../../domain/events/outbound.ts';
import { updateWebhook as change } from '../../domain/events/subscriptions.ts';
import type { Handler } from '../types.ts';

export const updateWebhook: Handler<'updateWebhook'> = ({ path, body }, { db, config }) =>
  change(db, path.id, body, new OutboundPolicy(config.events.allowedAddresses));
