import { restoreContent as takeBack } from '../../domain/contents/recycle.ts';
import type { Handler } from '../types.ts';

export const restoreContent: Handler<'restoreContent'> = ({ path, body }, { db, actor }) =>
  takeBack(db, path, actor, body?.toChannelId);
