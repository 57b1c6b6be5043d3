import type { Db } from '../../db/client.ts';
import type { User } from '../../db/models.ts';
import type { components } from '../../generated/openapi.ts';
import { USER_SCOPES } from '../access.ts';
import { userAccounts } from '../logins/accounts.ts';
import { loginFailed } from '../logins/authenticate.ts';
import { type AccountPolicy, isLockedOut } from '../logins/policy.ts';
import { type Issued, loginWithPassword, startSession } from '../logins/session.ts';
import { toUser } from './view.ts';

type LoginUserRequest = components['schemas']['LoginUserRequest'];
type LoginUserResponse = components['schemas']['LoginUserResponse'];

/**
 * A user logs in with an account and the MD5 of the password, or with an openId alone (the
 * messaging platform vouched for it). Either way the token reaches only what a user may do.
 */
export async function loginUser(
  db: Db,
  request: LoginUserRequest,
  secret: string,
  policy: AccountPolicy,
  now: Date = new Date(),
): Promise<LoginUserResponse> {
  const store = userAccounts(db, policy);
  const token = { kind: 'user' as const, scopes: USER_SCOPES, secret };
  let issued: Issued<User>;
  if ('openId' in request) {
    const row = await db.user.findUnique({ where: { openId: request.openId } });
    if (row === null || store.blocked(row) || isLockedOut(row.lockedUntil, now)) throw loginFailed();
    issued = await startSession(store, row, token, now);
  } else {
    issued = await loginWithPassword(store, request, token, now);
  }
  return { user: toUser(issued.row, now), accessToken: issued.accessToken, expiresAt: issued.expiresAt };
}
