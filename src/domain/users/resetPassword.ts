import type { Db } from '../../db/client.ts';
import type { components } from '../../generated/openapi.ts';
import { userAccounts } from '../logins/accounts.ts';
import type { AccountPolicy } from '../logins/policy.ts';
import { changePassword } from '../logins/session.ts';
import { toUser, type User } from './view.ts';

type ResetUserPasswordRequest = components['schemas']['ResetUserPasswordRequest'];

export async function resetUserPassword(
  db: Db,
  request: ResetUserPasswordRequest,
  policy: AccountPolicy,
): Promise<User> {
  return toUser(await changePassword(userAccounts(db), request, policy.passwordRule));
}
