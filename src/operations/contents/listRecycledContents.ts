import { listRecycledContents as binOf } from '../../domain/contents/recycle.ts';
import type { Handler } from '../types.ts';

export const listRecycledContents: Handler<'listRecycledContents'> = ({ path, query }, { db }) =>
  binOf(db, path.siteId, query);
