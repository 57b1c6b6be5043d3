import { listStlChannels } from '../../domain/stl/channels.ts';
import type { Handler } from '../types.ts';

export const stlListChannels: Handler<'stlListChannels'> = async ({ query }, { db, config }) => ({
  value: await listStlChannels(db, query, config.maxPerPage),
});
