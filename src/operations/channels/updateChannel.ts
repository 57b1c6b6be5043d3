import { updateChannel as applyChannelUpdate } from '../../domain/channels/update.ts';
import type { Handler } from '../types.ts';

/** A request without a body changes nothing but the modification date, like an empty object. */
export const updateChannel: Handler<'updateChannel'> = ({ path, body }, { db }) =>
  applyChannelUpdate(db, path, body ?? {});
