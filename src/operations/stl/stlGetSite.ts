import { getSite } from '../../domain/stl/sites.ts';
import type { Handler } from '../types.ts';

export const stlGetSite: Handler<'stlGetSite'> = async ({ query }, { reads }) => ({
  value: await getSite(reads, query),
});
