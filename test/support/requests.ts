import { expect } from '@jest/globals';
import { signAccessToken } from '../../src/domain/crypto/tokens.ts';
import type { Scope } from '../../src/domain/principal.ts';
import type { TestApp } from './app.ts';

/** Each body, posted to the URL with the key, is a problem (400 unless told) whose errors name that path. */
export async function expectRefusedBodies(
  app: TestApp,
  key: string,
  url: string,
  cases: readonly (readonly [body: unknown, path: string])[],
  status = 400,
): Promise<void> {
  for (const [body, path] of cases) {
    const response = await app.request
      .post(url)
      .set('X-SS-API-KEY', key)
      .send(body as object);
    expect({ status: response.status, type: response.type }).toEqual({
      status,
      type: 'application/problem+json',
    });
    expect(response.body.errors.map((error: { path: string }) => error.path)).toContain(path);
  }
}

/** An access token of an account the test made (a new account's token version is 0). */
export function accessTokenOf(
  app: TestApp,
  kind: 'user' | 'administrator',
  id: number,
  scopes: Scope[],
): string {
  return signAccessToken({ id, kind, scopes, version: 0 }, app.config.cmsSecret, { expiresIn: 600 }).token;
}
