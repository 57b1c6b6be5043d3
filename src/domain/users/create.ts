import type { Db } from '../../db/client.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { assertMayGrantAccount } from '../access.ts';
import { hashPlainPassword } from '../accounts/passwords.ts';
import { accountProblems, identifier, type PasswordRule } from '../accounts/rules.ts';
import { assertAccountUnique } from '../accounts/unique.ts';
import { assertNoProblems, type FieldProblem } from '../errors.ts';
import { actorOf } from '../events/actor.ts';
import { recordEvent } from '../events/record.ts';
import type { AccountPolicy } from '../logins/policy.ts';
import type { Principal } from '../principal.ts';
import { userFieldProblems, wordIsTrue } from './fields.ts';
import { toUser, type User } from './view.ts';

type CreateUserRequest = components['schemas']['CreateUserRequest'];

/**
 * Registers a user. The rules (user name, password, e-mail) are all reported at once; then the
 * user name, e-mail, mobile and openId must be free. A race between two creations of the same name
 * ends in the database's unique index, which the HTTP layer answers as the same conflict. A new
 * user comes with a password, so its creator must hold what the user's token will carry (access.ts).
 */
export async function createUser(
  db: Db,
  principal: Principal,
  request: CreateUserRequest,
  policy: Pick<AccountPolicy, 'passwordRule' | 'userTokenScopes'>,
): Promise<User> {
  assertMayGrantAccount(
    principal,
    { kind: 'user', userTokenScopes: policy.userTokenScopes },
    'Creating a user with a password',
  );
  const rule: PasswordRule = policy.passwordRule;
  const email = identifier(request.email);
  const problems: FieldProblem[] = accountProblems(
    { userName: request.userName, password: request.password },
    rule,
  );
  problems.push(...userFieldProblems({ email, avatarUrl: request.avatarUrl }));
  assertNoProblems(problems);
  const candidate = {
    userName: request.userName,
    email,
    mobile: identifier(request.mobile),
    openId: identifier(request.openId),
  };
  await assertAccountUnique(db, 'users', candidate);
  const stored = await hashPlainPassword(request.password);
  const row = await writeTransaction(db, async (tx) => {
    const created = await tx.user.create({
      data: {
        ...candidate,
        ...stored,
        displayName: request.displayName ?? '',
        avatarUrl: request.avatarUrl ?? '',
        groupId: request.groupId ?? 0,
        checked: wordIsTrue(request.checked, true),
        locked: wordIsTrue(request.locked, false),
      },
    });
    await recordEvent(tx, {
      actor: actorOf(principal),
      type: 'user.created',
      resourceId: created.id,
      payload: { userName: created.userName, checked: created.checked, locked: created.locked },
    });
    return created;
  });
  return toUser(row);
}
