import type { Db } from '../../db/client.ts';
import type { components } from '../../generated/openapi.ts';
import { administratorAccounts } from '../logins/accounts.ts';
import { changePassword } from '../logins/session.ts';
import { toAdministrator } from './view.ts';

type ResetAdministratorPasswordRequest = components['schemas']['ResetAdministratorPasswordRequest'];
type ResetAdministratorPasswordResponse = components['schemas']['ResetAdministratorPasswordResponse'];

export async function resetAdministratorPassword(
  db: Db,
  request: ResetAdministratorPasswordRequest,
): Promise<ResetAdministratorPasswordResponse> {
  return { value: toAdministrator(await changePassword(administratorAccounts(db), request)) };
}
