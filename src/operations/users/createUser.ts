import { createUser as create } from '../../domain/users/create.ts';
import type { Handler } from '../types.ts';

export const createUser: Handler<'createUser'> = ({ body }, { db }) => create(db, body);
