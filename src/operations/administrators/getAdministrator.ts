import { getAdministrator as get } from '../../domain/administrators/manage.ts';
import type { Handler } from '../types.ts';

export const getAdministrator: Handler<'getAdministrator'> = ({ path }, { db }) => get(db, path.idOrName);
