import type { Db } from '../../db/client.ts';
import type { components } from '../../generated/openapi.ts';
import { administratorAccounts } from '../logins/accounts.ts';
import { loginWithPassword } from '../logins/session.ts';
import { SCOPES } from '../principal.ts';
import { toAdministrator } from './view.ts';

type LoginAdministratorRequest = components['schemas']['LoginAdministratorRequest'];
type LoginAdministratorResponse = components['schemas']['LoginAdministratorResponse'];

/** An administrator's token carries every scope: it may be used in place of an API key. */
export async function loginAdministrator(
  db: Db,
  request: LoginAdministratorRequest,
  secret: string,
  now: Date = new Date(),
): Promise<LoginAdministratorResponse> {
  const issued = await loginWithPassword(
    administratorAccounts(db),
    request,
    { kind: 'administrator', scopes: SCOPES, secret },
    now,
  );
  return {
    administrator: toAdministrator(issued.row, now),
    accessToken: issued.accessToken,
    expiresAt: issued.expiresAt,
  };
}
