import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { normaliseAnswer } from './code.ts';

/*
 * The captcha cookie: `v1.<claims>.<signature>`, the claims base64url JSON, the signature
 * HMAC-SHA-256 over `v1.<claims>`. It is all a node needs to check an answer, so any node can
 * check an image another node drew. The code itself is never in it: only HMAC(code key, id, name,
 * code). A plain salted hash would not do — four characters from a known alphabet are a million
 * guesses, which a client would try offline in a second; without the service's secret it cannot.
 * Both keys are derived from the token secret (CMS_SECRET), each for this one purpose, so neither
 * is ever the key of an access token.
 */

const VERSION = 'v1';

export interface CaptchaClaims {
  /** Random, 128 bits: names the captcha in the used-captcha record and salts the code's hash. */
  id: string;
  name: string;
  /** Expiry, milliseconds since the epoch. */
  exp: number;
  /** HMAC of the code under the code key, base64url. */
  hash: string;
}

const claimsSchema = z.object({
  id: z.string().regex(/^[\w-]{22}$/),
  name: z.string().min(1).max(64),
  exp: z.number().int().positive(),
  hash: z.string().regex(/^[\w-]{43}$/),
});

function derivedKey(secret: string, purpose: string): Buffer {
  return createHmac('sha256', secret).update(`cms captcha ${purpose}`).digest();
}

function codeHash(secret: string, id: string, name: string, code: string): string {
  return createHmac('sha256', derivedKey(secret, 'code'))
    .update(`${id}\n${name}\n${normaliseAnswer(code)}`)
    .digest('base64url');
}

function signature(secret: string, signingInput: string): Buffer {
  return createHmac('sha256', derivedKey(secret, 'signing')).update(signingInput).digest();
}

export function signCaptchaToken(
  { name, code, expiresAt }: { name: string; code: string; expiresAt: number },
  secret: string,
): string {
  const id = randomBytes(16).toString('base64url');
  const claims: CaptchaClaims = { id, name, exp: expiresAt, hash: codeHash(secret, id, name, code) };
  const signingInput = `${VERSION}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${signingInput}.${signature(secret, signingInput).toString('base64url')}`;
}

/** The claims of a token this service signed, unaltered; undefined for anything else. */
export function verifyCaptchaToken(token: string, secret: string): CaptchaClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION) return undefined;
  const [version, payload, mac] = parts as [string, string, string];
  const expected = signature(secret, `${version}.${payload}`);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const parsed = claimsSchema.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `answer` is the code the claims were signed for (constant time). */
export function answerMatches(claims: CaptchaClaims, answer: string, secret: string): boolean {
  const expected = Buffer.from(claims.hash, 'base64url');
  const given = Buffer.from(codeHash(secret, claims.id, claims.name, answer), 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
