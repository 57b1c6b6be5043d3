import type { Db } from '../../db/client.ts';
import type { components } from '../../generated/openapi.ts';
import { administratorAccounts } from '../logins/accounts.ts';
import type { AccountPolicy } from '../logins/policy.ts';
import { changePassword } from '../logins/session.ts';
import { toAdministrator } from './view.ts';

type ResetAdministratorPasswordRequest = components['schemas']['ResetAdministratorPasswordRequest'];
type ResetAdministratorPasswordResponse = components['schemas']['ResetAdministratorPasswordResponse'];

export async function resetAdministratorPassword(
  db: Db,
  request: ResetAdministratorPasswordRequest,
  policy: AccountPolicy,
): Promise<ResetAdministratorPasswordResponse> {
  const row = await changePassword(administratorAccounts(db), request, policy.passwordRule);
  return { value: toAdministrator(row) };
}
