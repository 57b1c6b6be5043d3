import { getStlChannel } from '../../domain/stl/channel.ts';
import type { Handler } from '../types.ts';

export const stlGetChannel: Handler<'stlGetChannel'> = async ({ query }, services) => ({
  value: await getStlChannel(services, query),
});
