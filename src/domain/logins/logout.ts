import type { Db } from '../../db/client.ts';
import { forbidden } from '../errors.ts';
import type { Principal } from '../principal.ts';
import { administratorAccounts, userAccounts } from './accounts.ts';

/*
 * Logout ends the access token presented by advancing its account's token version: the
 * authorization stage compares each token's version with the account's on every request, so the
 * token (and any other issued to the account before) stops working at once, on every node.
 */

export async function logoutUser(db: Db, principal: Principal): Promise<{ value: true }> {
  if (principal.kind !== 'user') throw forbidden("Only a user's access token can be logged out here");
  await userAccounts(db).revokeTokens(principal.userId);
  return { value: true };
}

export async function logoutAdministrator(db: Db, principal: Principal): Promise<{ value: true }> {
  if (principal.kind !== 'administrator') {
    throw forbidden("Only an administrator's access token can be logged out here");
  }
  await administratorAccounts(db).revokeTokens(principal.administratorId);
  return { value: true };
}
