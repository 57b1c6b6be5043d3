import { rotateWebhookSecret as rotate } from '../../domain/events/subscriptions.ts';
import type { Handler } from '../types.ts';

export const rotateWebhookSecret: Handler<'rotateWebhookSecret'> = ({ path, body }, { db }) =>
  rotate(db, path.id, body?.overlapSeconds ?? 86_400);
