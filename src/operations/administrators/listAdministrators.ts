import { listAdministrators as list } from '../../domain/administrators/list.ts';
import type { Handler } from '../types.ts';

export const listAdministrators: Handler<'listAdministrators'> = ({ query }, { db }) =>
  list(db, query.page, query.perPage);
