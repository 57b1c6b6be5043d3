import type { Db } from '../../db/client.ts';
import type { Administrator, User } from '../../db/models.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { StoredPassword } from '../accounts/passwords.ts';
import type { AccountKind } from '../accounts/rules.ts';
import type { Actor } from '../events/actor.ts';
import { recordEvent } from '../events/record.ts';
import { NEXT_VERSION } from '../versions.ts';

/*
 * What logging in and changing a password need of an account table, for users and administrators
 * alike. The failure count kept on the account is a record for its administrators (atomic
 * increments, so concurrent failures on several nodes are all counted); the lockout and throttles
 * that act on failures live in the shared state, per account and address (attempts.ts).
 */

export interface AccountStore<R extends { id: number } & StoredPassword> {
  kind: AccountKind;
  /** The account whose user name, e-mail or mobile is `account` (user name first). */
  find(account: string): Promise<R | null>;
  /** An administrator's or the account's own lock (not the temporary lockout); unapproved users too. */
  blocked(row: R): boolean;
  lockedUntil(row: R): Date | null;
  /** Records a failed login on the account (never a lock: see attempts.ts). */
  failed(id: number): Promise<void>;
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

/*
 * The writes are the same for both tables; only the Prisma delegate differs (its types do not
 * unify), so the data of each write is made once here and each store only sends it. Each one
 * advances the record's version (its ETag), since each changes what get user / get administrator
 * answer.
 */
const countFailure = { countOfFailedLogin: { increment: 1 }, ...NEXT_VERSION };
const loginSucceeded = (now: Date) => ({
  ...NEXT_VERSION,
  countOfFailedLogin: 0,
  lockedUntil: null,
  countOfLogin: { increment: 1 },
  lastActivityDate: now,
});
/**
 * A new password: stored, ending a lockout and every token issued before. The operator's
 * `cms password` writes exactly this; a password change by its owner also records the activity.
 */
export const passwordReset = (stored: StoredPassword) => ({
  ...stored,
  ...NEXT_VERSION,
  countOfFailedLogin: 0,
  lockedUntil: null,
  tokenVersion: { increment: 1 },
});
/**
 * The operator's `cms password`: a new password for the account of that user name, with its
 * `passwordChanged` event (made by `system`) in the same transaction. False when there is none.
 */
export async function resetPasswordByName(
  db: Db,
  kind: 'user' | 'administrator',
  userName: string,
  stored: StoredPassword,
  actor: Actor,
): Promise<boolean> {
  const data = passwordReset(stored);
  return writeTransaction(db, async (tx) => {
    const found =
      kind === 'user'
        ? await tx.user.findUnique({ where: { userName }, select: { id: true } })
        : await tx.administrator.findUnique({ where: { userName }, select: { id: true } });
    if (found === null) return false;
    const { count } =
      kind === 'user'
        ? await tx.user.updateMany({ where: { id: found.id }, data })
        : await tx.administrator.updateMany({ where: { id: found.id }, data });
    if (count === 0) return false;
    await recordEvent(tx, {
      actor,
      type: kind === 'user' ? 'user.passwordChanged' : 'administrator.passwordChanged',
      resourceId: found.id,
    });
    return true;
  });
}

const passwordChanged = (stored: StoredPassword, now: Date) => ({
  ...passwordReset(stored),
  lastActivityDate: now,
});
const tokensRevoked = { tokenVersion: { increment: 1 }, ...NEXT_VERSION };

export function userAccounts(db: Db): AccountStore<User> {
  return {
    kind: 'users',
    find: async (account) => pick(await db.user.findMany({ where: byAnyName(account) }), account),
    blocked: (row) => row.locked || !row.checked,
    lockedUntil: (row) => row.lockedUntil,
    async failed(id) {
      await db.user.updateMany({ where: { id }, data: countFailure });
    },
    succeeded: (id, now) => db.user.update({ where: { id }, data: loginSucceeded(now) }),
    changePassword: (id, stored, now) =>
      writeTransaction(db, async (tx) => {
        const row = await tx.user.update({
          where: { id },
          data: { ...passwordChanged(stored, now), lastResetPasswordDate: now },
        });
        await recordEvent(tx, { type: 'user.passwordChanged', resourceId: id, actor: { type: 'user', id } });
        return row;
      }),
    async revokeTokens(id) {
      await db.user.updateMany({ where: { id }, data: tokensRevoked });
    },
  };
}

export function administratorAccounts(db: Db): AccountStore<Administrator> {
  return {
    kind: 'administrators',
    find: async (account) => pick(await db.administrator.findMany({ where: byAnyName(account) }), account),
    blocked: (row) => row.isLockedOut,
    lockedUntil: (row) => row.lockedUntil,
    async failed(id) {
      await db.administrator.updateMany({ where: { id }, data: countFailure });
    },
    succeeded: (id, now) => db.administrator.update({ where: { id }, data: loginSucceeded(now) }),
    changePassword: (id, stored, now) =>
      writeTransaction(db, async (tx) => {
        const row = await tx.administrator.update({ where: { id }, data: passwordChanged(stored, now) });
        await recordEvent(tx, {
          type: 'administrator.passwordChanged',
          resourceId: id,
          actor: { type: 'administrator', id },
        });
        return row;
      }),
    async revokeTokens(id) {
      await db.administrator.updateMany({ where: { id }, data: tokensRevoked });
    },
  };
}
