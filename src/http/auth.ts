import type { Request } from 'express';
import { verifyAccessToken } from '../domain/crypto/tokens.ts';
import { DomainError, forbidden, unauthenticated } from '../domain/errors.ts';
import { type Principal, SCOPES, type Scope } from '../domain/principal.ts';
import type { ApiKeyAuthenticator, AuthResult } from './apiKeys.ts';

/*
 * express-openapi-validator calls one handler per security scheme the operation lists and, when all
 * fail, reports the first failure in the order the contract lists them — which is "header missing"
 * whenever the caller used another scheme. So the decision is made once per request, here, from
 * whatever credentials the request carries, and remembered: the handlers only replay it, and the
 * error mapper reads the real reason back with authFailureOf().
 */

export const API_KEY_HEADER = 'x-ss-api-key';
export const API_KEY_QUERY = 'apiKey';

/** Sent with every 401 (RFC 9110 requires a challenge). */
export const WWW_AUTHENTICATE = 'ApiKey realm="cms", Bearer realm="cms"';

export const CREDENTIALS_REQUIRED =
  'This operation needs an API key (X-SS-API-KEY header or apiKey query parameter) or a bearer access token';

type Credentials = { kind: 'apiKey'; key: string } | { kind: 'bearer'; token: string };

/** Header key first, then the query key, then a bearer token: the first one present decides. */
export function credentialsOf(req: Request): Credentials | undefined {
  const header = req.headers[API_KEY_HEADER];
  if (typeof header === 'string' && header.trim() !== '') return { kind: 'apiKey', key: header.trim() };
  const query: unknown = req.query?.[API_KEY_QUERY];
  if (typeof query === 'string' && query !== '') return { kind: 'apiKey', key: query };
  const authorization = req.headers.authorization;
  const bearer = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (bearer?.[1] !== undefined) return { kind: 'bearer', token: bearer[1] };
  return undefined;
}

const decisions = new WeakMap<Request, Promise<AuthResult>>();
const principals = new WeakMap<Request, Principal>();
const failures = new WeakMap<Request, unknown>();

/** Who made an authorised request; anonymous on public operations. */
export function principalOf(req: Request): Principal {
  return principals.get(req) ?? { kind: 'anonymous' };
}

/**
 * Why the security check refused the request, when credentials were present: a DomainError (401,
 * 403), or whatever broke while checking them (a database that cannot be reached is a 503, not a
 * 401, and must not make a client discard a good key).
 */
export function authFailureOf(req: Request): unknown {
  return failures.get(req);
}

function bearerPrincipal(token: string, secret: string): AuthResult {
  try {
    const claims = verifyAccessToken(token, secret);
    const id = Number(claims.sub);
    if (claims.kind === 'administrator') {
      // An administrator's token stands in for the bootstrap key.
      return { principal: { kind: 'administrator', administratorId: id, scopes: new Set(SCOPES) } };
    }
    return { principal: { kind: 'user', userId: id, scopes: new Set(claims.scopes) } };
  } catch (error) {
    if (error instanceof DomainError) return { failure: error };
    throw error;
  }
}

class SecurityFailure extends Error {
  constructor(
    readonly status: 401 | 403,
    message: string,
  ) {
    super(message);
  }
}

export type SecurityHandler = (req: Request, scopes: string[]) => Promise<boolean>;

export function createSecurityHandlers(
  apiKeys: ApiKeyAuthenticator,
  secret: string,
): Record<'ApiKeyHeader' | 'ApiKeyQuery' | 'BearerToken', SecurityHandler> {
  function decide(req: Request): Promise<AuthResult> {
    let decision = decisions.get(req);
    if (decision === undefined) {
      const credentials = credentialsOf(req);
      decision =
        credentials === undefined
          ? Promise.resolve({ failure: unauthenticated(CREDENTIALS_REQUIRED) })
          : credentials.kind === 'apiKey'
            ? apiKeys.authenticate(credentials.key)
            : Promise.resolve(bearerPrincipal(credentials.token, secret));
      decisions.set(req, decision);
    }
    return decision;
  }

  const handler: SecurityHandler = async (req, scopes) => {
    let decision: AuthResult;
    try {
      decision = await decide(req);
    } catch (error) {
      failures.set(req, error);
      throw error;
    }
    if ('failure' in decision) {
      failures.set(req, decision.failure);
      throw new SecurityFailure(401, decision.failure.message);
    }
    const missing = scopes.filter((scope) => !decision.principal.scopes.has(scope as Scope));
    if (missing.length > 0) {
      const names = missing.map((scope) => `'${scope}'`).join(', ');
      const refusal = forbidden(`The credentials do not carry the ${names} scope this operation needs`);
      failures.set(req, refusal);
      throw new SecurityFailure(403, refusal.message);
    }
    principals.set(req, decision.principal);
    return true;
  };

  return { ApiKeyHeader: handler, ApiKeyQuery: handler, BearerToken: handler };
}
