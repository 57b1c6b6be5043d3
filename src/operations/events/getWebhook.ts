import { getWebhook as readWebhook } from '../../domain/events/subscriptions.ts';
import type { Handler } from '../types.ts';

export const getWebhook: Handler<'getWebhook'> = ({ path }, { db }) => readWebhook(db, path.id);
