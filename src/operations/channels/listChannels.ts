import { listChannels as channelsOf } from '../../domain/channels/list.ts';
import type { Handler } from '../types.ts';

export const listChannels: Handler<'listChannels'> = async ({ path }, { db, reads }) => ({
  value: await channelsOf(db, reads, path.siteId),
});
