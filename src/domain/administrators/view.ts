import type { Administrator as AdministratorRow } from '../../db/models.ts';
import type { components } from '../../generated/openapi.ts';
import { formatDateTime } from '../dates.ts';
import { isLockedOut } from '../logins/policy.ts';

export type Administrator = components['schemas']['Administrator'];

/** An administrator as answered: never any password material; `isLockedOut` includes a running lockout. */
export function toAdministrator(row: AdministratorRow, now: Date = new Date()): Administrator {
  return {
    id: row.id,
    siteId: row.siteId,
    departmentId: row.departmentId,
    areaId: row.areaId,
    userName: row.userName,
    displayName: row.displayName,
    email: row.email ?? '',
    mobile: row.mobile ?? '',
    creatorUserName: row.creatorUserName,
    password: '',
    passwordSalt: '',
    passwordFormat: 'Hashed',
    creationDate: formatDateTime(row.creationDate),
    lastActivityDate: formatDateTime(row.lastActivityDate),
    countOfLogin: row.countOfLogin,
    countOfFailedLogin: row.countOfFailedLogin,
    isLockedOut: row.isLockedOut || isLockedOut(row.lockedUntil, now),
    siteIdCollection: row.siteIdCollection,
  };
}
