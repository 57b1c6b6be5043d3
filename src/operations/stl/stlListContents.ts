import { listStlContents } from '../../domain/stl/contents.ts';
import type { Handler } from '../types.ts';

export const stlListContents: Handler<'stlListContents'> = async ({ query }, { db, provider, config }) => ({
  value: await listStlContents(db, provider, query, config.maxPerPage),
});
