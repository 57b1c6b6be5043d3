import { createUser as create } from '../../domain/users/create.ts';
import type { Handler } from '../types.ts';

export const createUser: Handler<'createUser'> = ({ body, principal }, { db, config }) =>
  create(db, principal, body, config.accounts);
