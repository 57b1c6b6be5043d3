import { createHmac } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import { signAccessToken, verifyAccessToken } from '../../src/domain/crypto/tokens.ts';
import { DomainError } from '../../src/domain/errors.ts';

const SECRET = 'k'.repeat(48);
const NOW = new Date('2026-01-01T00:00:00Z');

function refusal(token: string, secret = SECRET, now = NOW): string {
  try {
    verifyAccessToken(token, secret, now);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'unauthenticated') return error.message;
    throw error;
  }
  throw new Error('expected the token to be refused');
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('access tokens (HS256 JWT)', () => {
  const { token, expiresAt } = signAccessToken(
    { id: 12, kind: 'user', scopes: ['Contents', 'STL'], version: 3 },
    SECRET,
    {
      expiresIn: 3600,
      now: NOW,
    },
  );

  test('round trip: the claims come back, expiry is iat + lifetime', () => {
    expect(expiresAt).toEqual(new Date('2026-01-01T01:00:00Z'));
    expect(verifyAccessToken(token, SECRET, NOW)).toEqual({
      sub: '12',
      kind: 'user',
      scopes: ['Contents', 'STL'],
      ver: 3,
      iat: NOW.getTime() / 1000,
      exp: NOW.getTime() / 1000 + 3600,
    });
    const [header] = token.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
  });

  test('expired at exp, valid a second before', () => {
    expect(verifyAccessToken(token, SECRET, new Date(expiresAt.getTime() - 1000)).sub).toBe('12');
    expect(refusal(token, SECRET, expiresAt)).toBe('The access token has expired');
  });

  test('another secret, a changed payload or an altered signature are refused', () => {
    expect(refusal(token, 'other'.repeat(10))).toBe('The access token signature is invalid');
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(refusal(`${header}.${b64({ ...claims, kind: 'administrator' })}.${signature}`)).toBe(
      'The access token signature is invalid',
    );
    // A trailing character decodes to the same bytes; compared as text it is still refused.
    expect(refusal(`${token}A`)).toBe('The access token signature is invalid');
  });

  test('"alg: none" and other algorithms are refused before the signature is looked at', () => {
    const [, payload] = token.split('.') as [string, string];
    expect(refusal(`${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`)).toBe(
      'The access token is not an HS256 JWT',
    );
    expect(refusal(`${b64({ alg: 'HS512' })}.${payload}.x`)).toBe('The access token is not an HS256 JWT');
  });

  test('malformed tokens and bad claims are refused', () => {
    expect(refusal('abc')).toBe('The access token is malformed');
    const forged = (claims: unknown) => {
      const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
      return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
    };
    expect(refusal(forged({ sub: '1', kind: 'root', scopes: [], iat: 0, exp: 9e9 }))).toBe(
      'The access token claims are invalid',
    );
    expect(refusal(forged({ sub: '1', kind: 'user', scopes: ['Everything'], iat: 0, exp: 9e9 }))).toBe(
      'The access token claims are invalid',
    );
  });
});
