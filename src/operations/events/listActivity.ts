import { listActivity as readActivity } from '../../domain/events/activity.ts';
import type { Handler } from '../types.ts';

export const listActivity: Handler<'listActivity'> = ({ query }, { db }) => readActivity(db, query);
