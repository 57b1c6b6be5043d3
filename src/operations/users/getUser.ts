import { getUser as get } from '../../domain/users/manage.ts';
import type { Handler } from '../types.ts';

export const getUser: Handler<'getUser'> = ({ path, query }, { db }) => get(db, path.account, query.by);
