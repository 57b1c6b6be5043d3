import type { Db } from '../../db/client.ts';
import type { Administrator, User } from '../../db/models.ts';
import type { StoredPassword } from '../accounts/passwords.ts';
import type { AccountKind } from '../accounts/rules.ts';
import { LOCKOUT_FAILURES, LOCKOUT_MINUTES } from './policy.ts';

/*
 * What logging in and changing a password need of an account table, for users and administrators
 * alike. Counters change with atomic increments, so concurrent failures on several nodes are all
 * counted, and the lockout lives in the database: it holds across nodes and restarts.
 */

export interface AccountStore<R extends { id: number } & StoredPassword> {
  kind: AccountKind;
  /** The account whose user name, e-mail or mobile is `account` (user name first). */
  find(account: string): Promise<R | null>;
  /** An administrator's or the account's own lock (not the temporary lockout); unapproved users too. */
  blocked(row: R): boolean;
  lockedUntil(row: R): Date | null;
  /** Counts a failed login; every LOCKOUT_FAILURES-th in a row starts a lockout. */
  failed(id: number, now: Date): Promise<void>;
  /** Resets the failures, counts the login and records the activity. */
  succeeded(id: number, now: Date): Promise<R>;
  /** Sets a new password; every access token issued before stops working. */
  changePassword(id: number, stored: StoredPassword, now: Date): Promise<R>;
  /** Ends every access token issued before (logout). */
  revokeTokens(id: number): Promise<void>;
}

/** By user name, then e-mail, then mobile: an account's own name wins over another's e-mail. */
function pick<R extends { userName: string; email: string | null; mobile: string | null }>(
  rows: R[],
  account: string,
): R | null {
  for (const field of ['userName', 'email', 'mobile'] as const) {
    const found = rows.find((row) => row[field] === account);
    if (found) return found;
  }
  return null;
}

const byAnyName = (account: string) => ({
  OR: [{ userName: account }, { email: account }, { mobile: account }],
});

function lockoutEnd(now: Date): Date {
  return new Date(now.getTime() + LOCKOUT_MINUTES * 60_000);
}

export function userAccounts(db: Db): AccountStore<User> {
  return {
    kind: 'users',
    find: async (account) => pick(await db.user.findMany({ where: byAnyName(account) }), account),
    blocked: (row) => row.locked || !row.checked,
    lockedUntil: (row) => row.lockedUntil,
    async failed(id, now) {
      const { countOfFailedLogin } = await db.user.update({
        where: { id },
        data: { countOfFailedLogin: { increment: 1 } },
        select: { countOfFailedLogin: true },
      });
      if (countOfFailedLogin % LOCKOUT_FAILURES === 0) {
        await db.user.update({ where: { id }, data: { lockedUntil: lockoutEnd(now) } });
      }
    },
    succeeded: (id, now) =>
      db.user.update({
        where: { id },
        data: {
          countOfFailedLogin: 0,
          lockedUntil: null,
          countOfLogin: { increment: 1 },
          lastActivityDate: now,
        },
      }),
    changePassword: (id, stored, now) =>
      db.user.update({
        where: { id },
        data: {
          ...stored,
          countOfFailedLogin: 0,
          lockedUntil: null,
          lastResetPasswordDate: now,
          lastActivityDate: now,
          tokenVersion: { increment: 1 },
        },
      }),
    async revokeTokens(id) {
      await db.user.updateMany({ where: { id }, data: { tokenVersion: { increment: 1 } } });
    },
  };
}

export function administratorAccounts(db: Db): AccountStore<Administrator> {
  return {
    kind: 'administrators',
    find: async (account) => pick(await db.administrator.findMany({ where: byAnyName(account) }), account),
    blocked: (row) => row.isLockedOut,
    lockedUntil: (row) => row.lockedUntil,
    async failed(id, now) {
      const { countOfFailedLogin } = await db.administrator.update({
        where: { id },
        data: { countOfFailedLogin: { increment: 1 } },
        select: { countOfFailedLogin: true },
      });
      if (countOfFailedLogin % LOCKOUT_FAILURES === 0) {
        await db.administrator.update({ where: { id }, data: { lockedUntil: lockoutEnd(now) } });
      }
    },
    succeeded: (id, now) =>
      db.administrator.update({
        where: { id },
        data: {
          countOfFailedLogin: 0,
          lockedUntil: null,
          countOfLogin: { increment: 1 },
          lastActivityDate: now,
        },
      }),
    changePassword: (id, stored, now) =>
      db.administrator.update({
        where: { id },
        data: {
          ...stored,
          countOfFailedLogin: 0,
          lockedUntil: null,
          lastActivityDate: now,
          tokenVersion: { increment: 1 },
        },
      }),
    async revokeTokens(id) {
      await db.administrator.updateMany({ where: { id }, data: { tokenVersion: { increment: 1 } } });
    },
  };
}
