import { listWebhooks as readWebhooks } from '../../domain/events/subscriptions.ts';
import type { Handler } from '../types.ts';

export const listWebhooks: Handler<'listWebhooks'> = async (_input, { db }) => ({
  value: await readWebhooks(db),
});
