import { logoutAdministrator as logout } from '../../domain/logins/logout.ts';
import type { Handler } from '../types.ts';

export const logoutAdministrator: Handler<'logoutAdministrator'> = ({ principal }, { db }) =>
  logout(db, principal);
