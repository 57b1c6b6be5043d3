import { createUser as create } from '../../domain/users/create.ts';
import type { Handler } from '../types.ts';

export const createUser: Handler<'createUser'> = ({ body }, { db, config }) =>
  create(db, body, config.accounts.passwordRule);
