import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { unauthenticated } from '../errors.ts';
import { SCOPES, type Scope } from '../principal.ts';

/*
 * Access tokens are compact JWTs (RFC 7519) signed with HS256. Only HS256 is accepted: the header's
 * `alg` is checked, never trusted, so "none" or an algorithm swap cannot get past verification.
 */

export type TokenKind = 'user' | 'administrator';

export interface AccessTokenClaims {
  /** Id of the user or administrator, as a decimal string (JWT subjects are strings). */
  sub: string;
  kind: TokenKind;
  scopes: Scope[];
  /**
   * The account's token version when the token was issued. Logging out, changing the password or
   * locking the account advances the version, and every older token stops working at once.
   */
  ver: number;
  /** Issued-at and expiry, seconds since the epoch. */
  iat: number;
  exp: number;
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

const headerSchema = z.object({ alg: z.literal('HS256'), typ: z.literal('JWT').optional() });

const claimsSchema = z.object({
  sub: z.string().regex(/^[1-9]\d*$/),
  kind: z.enum(['user', 'administrator']),
  scopes: z.array(z.enum(SCOPES)),
  ver: z.number().int().min(0),
  iat: z.number().int(),
  exp: z.number().int(),
});

function mac(secret: string, signingInput: string): Buffer {
  return createHmac('sha256', secret).update(signingInput, 'utf8').digest();
}

function nowInSeconds(now: Date): number {
  return Math.floor(now.getTime() / 1000);
}

export interface SignOptions {
  /** Lifetime in seconds. */
  expiresIn: number;
  now?: Date;
}

export function signAccessToken(
  subject: { id: number; kind: TokenKind; scopes: readonly Scope[]; version: number },
  secret: string,
  { expiresIn, now = new Date() }: SignOptions,
): { token: string; expiresAt: Date } {
  const iat = nowInSeconds(now);
  const claims: AccessTokenClaims = {
    sub: String(subject.id),
    kind: subject.kind,
    scopes: [...subject.scopes],
    ver: subject.version,
    iat,
    exp: iat + expiresIn,
  };
  const signingInput = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const token = `${signingInput}.${mac(secret, signingInput).toString('base64url')}`;
  return { token, expiresAt: new Date(claims.exp * 1000) };
}

function decodeJson(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The claims of a genuine, unexpired token; otherwise an `unauthenticated` DomainError. The
 * messages say what is wrong without echoing any part of the token.
 */
export function verifyAccessToken(token: string, secret: string, now: Date = new Date()): AccessTokenClaims {
  const parts = token.split('.');
  if (parts.length !== 3) throw unauthenticated('The access token is malformed');
  const [header, payload, signature] = parts as [string, string, string];
  if (!headerSchema.safeParse(decodeJson(header)).success) {
    throw unauthenticated('The access token is not an HS256 JWT');
  }
  // Compared as text: base64url decoding ignores stray characters, so decoded bytes could match
  // for a signature that was altered.
  const expected = Buffer.from(mac(secret, `${header}.${payload}`).toString('base64url'));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw unauthenticated('The access token signature is invalid');
  }
  const claims = claimsSchema.safeParse(decodeJson(payload));
  if (!claims.success) throw unauthenticated('The access token claims are invalid');
  if (claims.data.exp <= nowInSeconds(now)) throw unauthenticated('The access token has expired');
  return claims.data;
}
