import { listSites } from '../../domain/stl/sites.ts';
import type { Handler } from '../types.ts';

// siteId and siteDir are accepted for the template tag's sake and do not filter (see the contract).
export const stlListSites: Handler<'stlListSites'> = async (_input, { db }) => ({
  value: await listSites(db),
});
