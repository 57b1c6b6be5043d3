import type { Db } from '../../db/client.ts';
import type { User } from '../../db/models.ts';
import type { components } from '../../generated/openapi.ts';
import { grantedScopes } from '../access.ts';
import { userAccounts } from '../logins/accounts.ts';
import { loginFailed } from '../logins/authenticate.ts';
import { type AccountPolicy, isLockedOut } from '../logins/policy.ts';
import { type Issued, loginWithPassword, startSession } from '../logins/session.ts';
import type { Principal } from '../principal.ts';
import { toUser } from './view.ts';

type LoginUserRequest = components['schemas']['LoginUserRequest'];
type LoginUserResponse = components['schemas']['LoginUserResponse'];

/**
 * Whether an `openId` login may be made by this caller. An openId is no secret (every user record
 * a `Users` key lists carries it), so it is accepted only from a back end that verified the
 * messaging platform's identity and says so with a key holding `Users`, or from anyone when the
 * operator turned password-less login on (PASSWORDLESS_LOGIN).
 */
export function mayLogInByOpenId(caller: Principal, policy: AccountPolicy): boolean {
  return policy.passwordlessLogin || grantedScopes(caller).has('Users');
}

/**
 * A user logs in with an account and the MD5 of the password, or with an openId alone (from a
 * trusted caller, above). Either way the token carries a member's reads and the scopes the
 * operator grants users (USER_TOKEN_SCOPES), nothing more.
 */
export async function loginUser(
  db: Db,
  request: LoginUserRequest,
  caller: Principal,
  secret: string,
  policy: AccountPolicy,
  now: Date = new Date(),
): Promise<LoginUserResponse> {
  const store = userAccounts(db);
  const token = { kind: 'user' as const, scopes: policy.userTokenScopes, secret };
  let issued: Issued<User>;
  if ('openId' in request) {
    if (!mayLogInByOpenId(caller, policy)) throw loginFailed();
    const row = await db.user.findUnique({ where: { openId: request.openId } });
    if (row === null || store.blocked(row) || isLockedOut(row.lockedUntil, now)) throw loginFailed();
    issued = await startSession(store, row, token, now);
  } else {
    issued = await loginWithPassword(store, request, token, now);
  }
  return { user: toUser(issued.row, now), accessToken: issued.accessToken, expiresAt: issued.expiresAt };
}
