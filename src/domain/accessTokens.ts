import type { Db } from '../db/client.ts';
import { looksLikeApiKey } from './crypto/apiKeys.ts';
import { verifyAccessToken } from './crypto/tokens.ts';
import { unauthenticated } from './errors.ts';
import type { Principal } from './principal.ts';

export type TokenPrincipal = Extract<Principal, { kind: 'user' | 'administrator' }>;

/*
 * A signature and an expiry are not enough: a token must stop working as soon as its account is
 * deleted or locked, or the holder logs out or changes the password. So every use is checked
 * against the account as it is now; its token version, advanced by each of those events, must still
 * be the one the token was issued with.
 */
export async function principalOfAccessToken(
  db: Db,
  token: string,
  secret: string,
  now: Date = new Date(),
): Promise<{ principal: TokenPrincipal; expiresAt: number }> {
  // A key sent as a bearer token is a common slip: say where keys go (the 401 echoes no secret).
  if (looksLikeApiKey(token)) {
    throw unauthenticated(
      'This is an API key, not an access token: send it in the X-SS-API-KEY header (or the apiKey query parameter)',
    );
  }
  const claims = verifyAccessToken(token, secret, now);
  const id = Number(claims.sub);
  const account =
    claims.kind === 'administrator'
      ? await db.administrator
          .findUnique({ where: { id }, select: { isLockedOut: true, lockedUntil: true, tokenVersion: true } })
          .then((row) => row && { locked: row.isLockedOut, ...row })
      : await db.user.findUnique({
          where: { id },
          select: { locked: true, lockedUntil: true, tokenVersion: true },
        });
  if (account === null) throw unauthenticated('The account of this access token no longer exists');
  if (account.locked || (account.lockedUntil !== null && account.lockedUntil.getTime() > now.getTime())) {
    throw unauthenticated('The account of this access token is locked');
  }
  if (account.tokenVersion !== claims.ver) {
    throw unauthenticated('The access token has been revoked (logout, password change or lock)');
  }
  const principal: TokenPrincipal =
    claims.kind === 'administrator'
      ? { kind: 'administrator', administratorId: id, scopes: new Set(claims.scopes) }
      : { kind: 'user', userId: id, scopes: new Set(claims.scopes) };
  // The expiry in epoch milliseconds, for callers that keep the principal no longer than the token.
  return { principal, expiresAt: claims.exp * 1000 };
}
