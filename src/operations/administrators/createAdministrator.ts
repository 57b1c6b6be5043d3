import { createAdministrator as create } from '../../domain/administrators/manage.ts';
import type { Handler } from '../types.ts';

export const createAdministrator: Handler<'createAdministrator'> = ({ body, principal }, { db, config }) =>
  create(db, principal, body, config.accounts.passwordRule);
