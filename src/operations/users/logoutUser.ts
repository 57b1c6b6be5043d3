import { logoutUser as logout } from '../../domain/logins/logout.ts';
import type { Handler } from '../types.ts';

export const logoutUser: Handler<'logoutUser'> = ({ principal }, { db }) => logout(db, principal);
