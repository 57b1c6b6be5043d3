import { deleteWebhook as remove } from '../../domain/events/subscriptions.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

export const deleteWebhook: Handler<'deleteWebhook'> = ({ path, header }, { db }) =>
  remove(db, path.id, parseIfMatch(header['If-Match']));
