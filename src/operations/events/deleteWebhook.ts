import { deleteWebhook as remove } from '../../domain/events/subscriptions.ts';
import type { Handler } from '../types.ts';

export const deleteWebhook: Handler<'deleteWebhook'> = ({ path }, { db }) => remove(db, path.id);
