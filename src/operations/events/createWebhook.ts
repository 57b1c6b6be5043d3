import { OutboundPolicy } from '../../domain/events/outbound.ts';
import { createWebhook as subscribe } from '../../domain/events/subscriptions.ts';
import type { Handler } from '../types.ts';

export const createWebhook: Handler<'createWebhook'> = async ({ body }, { db, config, reply }) =>
  reply({
    status: 201,
    mediaType: 'application/json',
    body: await subscribe(db, body, new OutboundPolicy(config.events.allowedAddresses)),
  });
