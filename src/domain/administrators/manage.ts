import type { Db } from '../../db/client.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { assertMayGrantAccount } from '../access.ts';
import { hashPlainPassword } from '../accounts/passwords.ts';
import { accountProblems, identifier, type PasswordRule } from '../accounts/rules.ts';
import { assertAccountUnique } from '../accounts/unique.ts';
import { assertNoProblems, DomainError, notFound } from '../errors.ts';
import { actorOf } from '../events/actor.ts';
import { recordEvent } from '../events/record.ts';
import type { Principal } from '../principal.ts';
import { type Precondition, refuseUnlessMissing, type Versioned, versionFilter } from '../versions.ts';
import { toAdministrator } from './view.ts';

type CreateAdministratorRequest = components['schemas']['CreateAdministratorRequest'];
type AdministratorResponse = components['schemas']['UpdateAdministratorResponse'];

/** A path of digits only names an id; anything else a user name (which may not be all digits then). */
const DIGITS = /^\d{1,10}$/u;
const MAX_ID = 2_147_483_647;

/**
 * Creates an administrator. Its token would carry every scope, so the caller must hold every scope
 * already (access.ts). An administrator calling is recorded as the creator, whatever the body says.
 */
export async function createAdministrator(
  db: Db,
  principal: Principal,
  request: CreateAdministratorRequest,
  rule: PasswordRule,
): Promise<AdministratorResponse> {
  assertMayGrantAccount(principal, { kind: 'administrator' }, 'Creating an administrator');
  assertNoProblems(accountProblems({ userName: request.userName, password: request.password }, rule));
  const candidate = {
    userName: request.userName,
    email: identifier(request.email),
    mobile: identifier(request.mobile),
  };
  await assertAccountUnique(db, 'administrators', candidate);
  const creator =
    principal.kind === 'administrator'
      ? await db.administrator.findUnique({
          where: { id: principal.administratorId },
          select: { userName: true },
        })
      : null;
  const stored = await hashPlainPassword(request.password);
  const row = await writeTransaction(db, async (tx) => {
    const created = await tx.administrator.create({
      data: {
        ...candidate,
        ...stored,
        displayName: request.displayName ?? '',
        creatorUserName: creator?.userName ?? request.creatorUserName ?? '',
        siteId: request.siteId ?? 0,
        departmentId: request.departmentId ?? 0,
        areaId: request.areaId ?? 0,
        siteIdCollection: request.siteIdCollection ?? '',
      },
    });
    await recordEvent(tx, {
      actor: actorOf(principal),
      type: 'administrator.created',
      resourceId: created.id,
      payload: { userName: created.userName, isLockedOut: created.isLockedOut },
    });
    return created;
  });
  return { value: toAdministrator(row) };
}

/** One administrator by id (digits) or user name; not-found otherwise. */
export async function getAdministrator(db: Db, idOrName: string): Promise<Versioned<AdministratorResponse>> {
  const id = DIGITS.test(idOrName) ? Number(idOrName) : undefined;
  const row =
    id === undefined
      ? await db.administrator.findUnique({ where: { userName: idOrName } })
      : id > MAX_ID
        ? null
        : await db.administrator.findUnique({ where: { id } });
  if (row === null) throw notFound(`Administrator '${idOrName}' does not exist`);
  return { record: { value: toAdministrator(row) }, version: row.version };
}

/**
 * Deletes an administrator, answering it as it was. Removing an account that holds every scope is
 * as strong as creating one, so it needs the same caller; an administrator may not delete itself,
 * so that an installation cannot lose its last way in by a slip. Its tokens end with the row: a
 * token's account is read on every request, and the HTTP layer drops the credential cache of every
 * node after any write of this family (docs/security/credentials.md).
 */
export async function deleteAdministrator(
  db: Db,
  principal: Principal,
  id: number,
  precondition?: Precondition,
): Promise<AdministratorResponse> {
  assertMayGrantAccount(principal, { kind: 'administrator' }, 'Deleting an administrator');
  if (principal.kind === 'administrator' && principal.administratorId === id) {
    throw new DomainError('validation', 'An administrator cannot delete itself', [
      { field: 'id', message: 'is the calling administrator' },
    ]);
  }
  const row = await writeTransaction(db, async (tx) => {
    const found = await tx.administrator.findUnique({ where: { id } });
    if (found === null) return null;
    const { count } = await tx.administrator.deleteMany({ where: { id, ...versionFilter(precondition) } });
    if (count === 0) {
      return refuseUnlessMissing(`Administrator ${id}`, precondition, () =>
        tx.administrator.findUnique({ where: { id }, select: { version: true } }),
      );
    }
    await recordEvent(tx, {
      actor: actorOf(principal),
      type: 'administrator.deleted',
      resourceId: id,
      payload: { userName: found.userName },
    });
    return found;
  });
  if (row === null) throw notFound(`Administrator ${id} does not exist`);
  return { value: toAdministrator(row) };
}
