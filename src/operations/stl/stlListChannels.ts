import { listStlChannels } from '../../domain/stl/channels.ts';
import type { Handler } from '../types.ts';

export const stlListChannels: Handler<'stlListChannels'> = async ({ query }, services) => ({
  value: await listStlChannels(services, query, services.config.maxPerPage),
});
