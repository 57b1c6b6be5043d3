import type { User as UserRow } from '../../db/models.ts';
import type { components } from '../../generated/openapi.ts';
import { formatDateTime } from '../dates.ts';
import { isLockedOut } from '../logins/policy.ts';

export type User = components['schemas']['User'];

/** A user as answered: never any password material; `locked` includes a running lockout. */
export function toUser(row: UserRow, now: Date = new Date()): User {
  return {
    id: row.id,
    userName: row.userName,
    displayName: row.displayName,
    email: row.email ?? '',
    mobile: row.mobile ?? '',
    avatarUrl: row.avatarUrl,
    openId: row.openId ?? '',
    password: '',
    passwordFormat: 'Hashed',
    createDate: formatDateTime(row.createDate),
    lastResetPasswordDate: formatDateTime(row.lastResetPasswordDate),
    lastActivityDate: formatDateTime(row.lastActivityDate),
    countOfLogin: row.countOfLogin,
    countOfFailedLogin: row.countOfFailedLogin,
    countOfWriting: row.countOfWriting,
    checked: row.checked,
    locked: row.locked || isLockedOut(row.lockedUntil, now),
  };
}
