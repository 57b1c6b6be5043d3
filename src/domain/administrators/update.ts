import type { Db } from '../../db/client.ts';
import type { Prisma } from '../../db/models.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import type { SharedState } from '../../state/port.ts';
import { assertMayGrantAccount } from '../access.ts';
import { hashPlainPassword } from '../accounts/passwords.ts';
import { accountProblems, identifier } from '../accounts/rules.ts';
import { assertAccountUnique } from '../accounts/unique.ts';
import { parseDateTime } from '../dates.ts';
import { assertNoProblems, type FieldProblem, notFound } from '../errors.ts';
import { actorOf } from '../events/actor.ts';
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
import { toAdministrator } from './view.ts';

type UpdateAdministratorRequest = components['schemas']['UpdateAdministratorRequest'];
type UpdateAdministratorResponse = components['schemas']['UpdateAdministratorResponse'];

function date(field: string, text: string | undefined, problems: FieldProblem[]): Date | undefined {
  if (text === undefined) return undefined;
  const parsed = parseDateTime(text);
  if (parsed === undefined) problems.push({ field, message: 'is not a date on the calendar' });
  return parsed;
}

/**
 * Partial update: only the fields present change. A non-empty password is hashed (`""` leaves it
 * alone, so a record read from the list can be sent back). Locking, and a new password, end every
 * access token of the administrator; unlocking also ends a temporary lockout, and lifts the
 * lockouts of every address and the account-wide throttle in the shared state (attempts.ts).
 * Setting a password or unlocking needs a caller that holds every scope (access.ts): an
 * administrator's token carries them all, so otherwise the `Administrators` scope would be a way
 * to every other.
 */
export async function updateAdministrator(
  db: Db,
  state: SharedState,
  principal: Principal,
  id: number,
  given: UpdateAdministratorRequest | undefined,
  policy: Pick<AccountPolicy, 'passwordRule' | 'lockoutMinutes' | 'throttleFailures'>,
  precondition?: Precondition,
): Promise<Versioned<UpdateAdministratorResponse>> {
  const request = given ?? {};
  const lock =
    request.isLockedOut === undefined ? undefined : String(request.isLockedOut).toLowerCase() === 'true';
  const newPassword =
    request.password === undefined || request.password === '' ? undefined : request.password;
  const existing = await db.administrator.findUnique({
    where: { id },
    select: { isLockedOut: true, lockedUntil: true, userName: true, email: true, mobile: true },
  });
  if (existing === null) throw notFound(`Administrator ${id} does not exist`);
  const names = [existing.userName, existing.email, existing.mobile];
  // `isLockedOut: "false"` on an account that is not locked hands nothing over (a record sent back).
  // Lockouts in the shared state count as a lock too, though the record does not show them.
  const lockedOut = lock === false && (await holdsLockouts(state, policy, 'administrators', names));
  const unlocks =
    lock === false && (existing.isLockedOut || isLockedOut(existing.lockedUntil, new Date()) || lockedOut);
  if (newPassword !== undefined || unlocks) {
    const what =
      newPassword === undefined ? 'Unlocking an administrator' : "Setting an administrator's password";
    assertMayGrantAccount(principal, { kind: 'administrator' }, what);
  }
  const problems = accountProblems(
    { userName: request.userName, password: newPassword },
    policy.passwordRule,
  );
  const creationDate = date('creationDate', request.creationDate, problems);
  const lastActivityDate = date('lastActivityDate', request.lastActivityDate, problems);
  assertNoProblems(problems);

  const email = request.email === undefined ? undefined : identifier(request.email);
  const mobile = request.mobile === undefined ? undefined : identifier(request.mobile);
  await assertAccountUnique(db, 'administrators', { userName: request.userName, email, mobile }, id);
  // Before the write, so that a store that does not answer (503) leaves everything as it was.
  if (unlocks) await liftLockouts(state, policy, 'administrators', names, lockedOut);

  const data: Prisma.AdministratorUpdateManyMutationInput = {
    userName: request.userName,
    displayName: request.displayName,
    creatorUserName: request.creatorUserName,
    email,
    mobile,
    creationDate,
    lastActivityDate,
    countOfLogin: request.countOfLogin,
    departmentId: request.departmentId,
    areaId: request.areaId,
    ...(newPassword === undefined ? {} : await hashPlainPassword(newPassword)),
    ...(lock === undefined ? {} : { isLockedOut: lock }),
    ...(lock === false ? { lockedUntil: null, countOfFailedLogin: 0 } : {}),
    ...(lock === true || newPassword !== undefined ? { tokenVersion: { increment: 1 } } : {}),
  };
  // updateMany: an administrator deleted meanwhile is a 404, not a failed update.
  const row = await writeTransaction(db, async (tx) => {
    const { count } = await tx.administrator.updateMany({
      where: { id, ...versionFilter(precondition) },
      data: { ...data, ...NEXT_VERSION },
    });
    if (count === 0) {
      return refuseUnlessMissing(`Administrator ${id}`, precondition, () =>
        tx.administrator.findUnique({ where: { id }, select: { version: true } }),
      );
    }
    const actor = actorOf(principal);
    await recordEvent(tx, {
      type: 'administrator.updated',
      resourceId: id,
      payload: plainFields(data),
      actor,
    });
    if (lock === true) await recordEvent(tx, { type: 'administrator.locked', resourceId: id, actor });
    if (newPassword !== undefined)
      await recordEvent(tx, { type: 'administrator.passwordChanged', resourceId: id, actor });
    return tx.administrator.findUnique({ where: { id } });
  });
  if (row === null) throw notFound(`Administrator ${id} does not exist`);
  return { record: { value: toAdministrator(row) }, version: row.version };
}
