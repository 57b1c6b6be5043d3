import { listUsers as list } from '../../domain/users/list.ts';
import type { Handler } from '../types.ts';

export const listUsers: Handler<'listUsers'> = ({ query }, { db }) => list(db, query.page, query.perPage);
