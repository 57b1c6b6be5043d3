import { listContents as listSiteContents } from '../../domain/contents/list.ts';
import type { Handler } from '../types.ts';

export const listContents: Handler<'listContents'> = ({ body }, { db, provider, config }) =>
  listSiteContents(db, provider, body, config.maxPerPage);
