import type { Db } from '../../db/client.ts';
import type { Prisma } from '../../db/models.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import type { SharedState } from '../../state/port.ts';
import { assertMayGrantAccount } from '../access.ts';
import { hashPlainPassword } from '../accounts/passwords.ts';
import { accountProblems, identifier } from '../accounts/rules.ts';
import { assertAccountUnique } from '../accounts/unique.ts';
import { assertNoProblems, notFound } from '../errors.ts';
import { type Actor, actorOf } from '../events/actor.ts';
import { plainFields, recordEvent } from '../events/record.ts';
import { holdsLockouts, liftLockouts } from '../logins/attempts.ts';
import { type AccountPolicy, isLockedOut } from '../logins/policy.ts';
import type { Principal } from '../principal.ts';
import {
  NEXT_VERSION,
  type Precondition,
  refuseUnlessMissing,
  type Versioned,
  versionFilter,
} from '../versions.ts';
import { userFieldProblems, wordIsTrue } from './fields.ts';
import { toUser, type User } from './view.ts';

type UpdateUserRequest = components['schemas']['UpdateUserRequest'];
export type UserKey = 'id' | 'userName' | 'email' | 'mobile' | 'openId';

const DIGITS = /^\d{1,10}$/u;
const MAX_ID = 2_147_483_647;

/** One user by the identifier `by` names (default: digits are an id, anything else a user name). */
export async function getUser(db: Db, account: string, by: UserKey | undefined): Promise<Versioned<User>> {
  const key: UserKey = by ?? (DIGITS.test(account) ? 'id' : 'userName');
  let row = null;
  if (key === 'id') {
    const id = DIGITS.test(account) ? Number(account) : 0;
    row = id >= 1 && id <= MAX_ID ? await db.user.findUnique({ where: { id } }) : null;
  } else {
    row = await db.user.findFirst({ where: { [key]: account } });
  }
  if (row === null) throw notFound(`No user has the ${key} '${account}'`);
  return { record: toUser(row), version: row.version };
}

/**
 * Partial update with the rules of creation for what is given. A new password and unlocking hand
 * the account's access over, so they need a caller holding what the user's token carries
 * (access.ts); a new password, locking and withdrawing approval end the user's access tokens.
 * Unlocking also lifts the lockouts of every address and the account-wide throttle in the shared
 * state (attempts.ts).
 */
export async function updateUser(
  db: Db,
  state: SharedState,
  principal: Principal,
  id: number,
  given: UpdateUserRequest | undefined,
  policy: Pick<AccountPolicy, 'passwordRule' | 'userTokenScopes' | 'lockoutMinutes' | 'throttleFailures'>,
  precondition?: Precondition,
): Promise<Versioned<User>> {
  const request = given ?? {};
  const lock = request.locked === undefined ? undefined : wordIsTrue(request.locked, false);
  const checked = request.checked === undefined ? undefined : wordIsTrue(request.checked, true);
  const newPassword =
    request.password === undefined || request.password === '' ? undefined : request.password;
  const existing = await db.user.findUnique({
    where: { id },
    select: { locked: true, lockedUntil: true, userName: true, email: true, mobile: true, openId: true },
  });
  if (existing === null) throw notFound(`User ${id} does not exist`);
  const names = [existing.userName, existing.email, existing.mobile, existing.openId];
  // `locked: "false"` on an account that is not locked hands nothing over (a record sent back).
  // Lockouts in the shared state count as a lock too, though the record does not show them.
  const lockedOut = lock === false && (await holdsLockouts(state, policy, 'users', names));
  const unlocks =
    lock === false && (existing.locked || isLockedOut(existing.lockedUntil, new Date()) || lockedOut);
  if (newPassword !== undefined || unlocks) {
    const what = newPassword === undefined ? 'Unlocking a user' : "Setting a user's password";
    assertMayGrantAccount(principal, { kind: 'user', userTokenScopes: policy.userTokenScopes }, what);
  }
  const email = request.email === undefined ? undefined : identifier(request.email);
  assertNoProblems([
    ...accountProblems({ userName: request.userName, password: newPassword }, policy.passwordRule),
    ...userFieldProblems({ email, avatarUrl: request.avatarUrl }),
  ]);
  const candidate = {
    userName: request.userName,
    email,
    mobile: request.mobile === undefined ? undefined : identifier(request.mobile),
    openId: request.openId === undefined ? undefined : identifier(request.openId),
  };
  await assertAccountUnique(db, 'users', candidate, id);
  // Before the write, so that a store that does not answer (503) leaves everything as it was.
  if (unlocks) await liftLockouts(state, policy, 'users', names, lockedOut);
  const endsTokens = newPassword !== undefined || lock === true || checked === false;
  const data: Prisma.UserUpdateManyMutationInput = {
    ...candidate,
    displayName: request.displayName,
    avatarUrl: request.avatarUrl,
    groupId: request.groupId,
    checked,
    ...(newPassword === undefined
      ? {}
      : { ...(await hashPlainPassword(newPassword)), lastResetPasswordDate: new Date() }),
    ...(lock === undefined ? {} : { locked: lock }),
    ...(lock === false ? { lockedUntil: null, countOfFailedLogin: 0 } : {}),
    ...(endsTokens ? { tokenVersion: { increment: 1 } } : {}),
    ...NEXT_VERSION,
  };
  // updateMany: a user deleted meanwhile is a 404, not a failed update; a stale If-Match a 412.
  const row = await writeTransaction(db, async (tx) => {
    const { count } = await tx.user.updateMany({ where: { id, ...versionFilter(precondition) }, data });
    if (count === 0) {
      return refuseUnlessMissing(`User ${id}`, precondition, () =>
        tx.user.findUnique({ where: { id }, select: { version: true } }),
      );
    }
    const actor = actorOf(principal);
    await recordEvent(tx, { type: 'user.updated', resourceId: id, payload: plainFields(data), actor });
    if (lock === true) await recordEvent(tx, { type: 'user.locked', resourceId: id, actor });
    if (newPassword !== undefined)
      await recordEvent(tx, { type: 'user.passwordChanged', resourceId: id, actor });
    return tx.user.findUnique({ where: { id } });
  });
  if (row === null) throw notFound(`User ${id} does not exist`);
  return { record: toUser(row), version: row.version };
}

/**
 * Deletes a user, answering it as it was. Its tokens end with the row: a token's account is read
 * on every request, and the HTTP layer drops the credential cache of every node after any write of
 * this family (docs/security/credentials.md).
 */
export async function deleteUser(
  db: Db,
  id: number,
  actor: Actor,
  precondition?: Precondition,
): Promise<User> {
  const row = await writeTransaction(db, async (tx) => {
    const found = await tx.user.findUnique({ where: { id } });
    if (found === null) return null;
    const { count } = await tx.user.deleteMany({ where: { id, ...versionFilter(precondition) } });
    if (count === 0) {
      return refuseUnlessMissing(`User ${id}`, precondition, () =>
        tx.user.findUnique({ where: { id }, select: { version: true } }),
      );
    }
    await recordEvent(tx, {
      type: 'user.deleted',
      resourceId: id,
      payload: { userName: found.userName },
      actor,
    });
    return found;
  });
  if (row === null) throw notFound(`User ${id} does not exist`);
  return toUser(row);
}
