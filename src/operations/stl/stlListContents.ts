import { listStlContents } from '../../domain/stl/contents.ts';
import type { Handler } from '../types.ts';

export const stlListContents: Handler<'stlListContents'> = async ({ query }, services) => ({
  value: await listStlContents(services, query, services.config.maxPerPage),
});
