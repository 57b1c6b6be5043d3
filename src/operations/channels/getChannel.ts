import { getChannel as readChannel } from '../../domain/channels/read.ts';
import type { Handler } from '../types.ts';

export const getChannel: Handler<'getChannel'> = ({ path }, { db }) =>
  readChannel(db, path.siteId, path.channelId);
