import { updateChannel as applyChannelUpdate } from '../../domain/channels/update.ts';
import type { Handler } from '../types.ts';

export const updateChannel: Handler<'updateChannel'> = ({ path, body }, { db }) =>
  applyChannelUpdate(db, path, body);
