import { hash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ContractOperation } from '../contract.ts';
import type { Db } from '../db/client.ts';
import { assertMayCall } from '../domain/access.ts';
import { principalOfAccessToken } from '../domain/accessTokens.ts';
import { DomainError, unauthenticated } from '../domain/errors.ts';
import type { Principal, Scope } from '../domain/principal.ts';
import { RecentlyUsed } from '../recentlyUsed.ts';
import type { ApiKeyAuthenticator } from './apiKeys.ts';
import type { CachedCredential, CredentialCache } from './credentialCache.ts';
import { queryOnce } from './queryOnce.ts';

/*
 * One authentication and authorization stage, ahead of request validation (so a caller without
 * access learns nothing about the operation's input rules). For each operation of the contract it
 * resolves the principal once — an API key, or a bearer token checked against its account's current
 * state — and decides access from the operation's requirement (domain/access.ts). The principal is
 * kept on res.locals for the dispatcher, which refuses to run a handler the stage did not pass.
 */

export const API_KEY_HEADER = 'x-ss-api-key';
export const API_KEY_QUERY = 'apiKey';

/** Sent with every 401 (RFC 9110 requires a challenge). */
export const WWW_AUTHENTICATE = 'ApiKey realm="cms", Bearer realm="cms"';

export const CREDENTIALS_REQUIRED =
  'This operation needs an API key (X-SS-API-KEY header or apiKey query parameter) or a bearer access token';

export type Credentials = { kind: 'apiKey'; key: string } | { kind: 'bearer'; token: string };

/** Header key first, then the query key, then a bearer token: the first one present decides. */
export function credentialsOf(req: Request): Credentials | undefined {
  const header = req.headers[API_KEY_HEADER];
  if (typeof header === 'string' && header.trim() !== '') return { kind: 'apiKey', key: header.trim() };
  const query: unknown = queryOnce(req)[API_KEY_QUERY];
  if (typeof query === 'string' && query !== '') return { kind: 'apiKey', key: query };
  const authorization = req.headers.authorization;
  const bearer = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (bearer?.[1] !== undefined) return { kind: 'bearer', token: bearer[1] };
  return undefined;
}

/** A credential's fingerprint: SHA-256 of its text (for an API key, exactly its stored digest). */
export function fingerprintOf(credentials: Credentials): string {
  const secret = credentials.kind === 'apiKey' ? credentials.key : credentials.token;
  // One call: a Hash object per request cost more than the digest of a key.
  return hash('sha256', secret, 'hex');
}

export interface PresentedCredentials {
  credentials: Credentials;
  fingerprint: string;
}

// Not shared state: each request's own memo, collected with its request.
const presented = new WeakMap<Request, PresentedCredentials | null>();

/**
 * A request's credentials and their fingerprint, worked out once: the rate limiter and then the
 * authentication stage both need them (the headers and query they come from do not change between).
 */
export function presentedCredentialsOf(req: Request): PresentedCredentials | undefined {
  let found = presented.get(req);
  if (found === undefined) {
    const credentials = credentialsOf(req);
    found = credentials === undefined ? null : { credentials, fingerprint: fingerprintOf(credentials) };
    presented.set(req, found);
  }
  return found ?? undefined;
}

/** What the rate limiter needs to know about a credential that authenticated. */
export interface CredentialBudget {
  /** Requests a minute; null for unlimited (tokens, and keys without a limit of their own). */
  limitPerMinute: number | null;
  /** Name of the shared counter: the key's id, so that every node (and a reset) counts it together. */
  counter: string;
}

/**
 * Credentials this process has seen succeed lately, by fingerprint, with their budget. The rate
 * limiter runs before authentication (so a flood is turned away before it costs a lookup) and
 * therefore knows a credential only from here: a known credential gets its own budget (unlimited
 * unless its key has a limit), anything else — none, or a made-up, deleted or reset key — counts
 * against the sender's address. Authentication refreshes an entry on every success (so a changed
 * limit applies from the next request on) and forgets it on a refusal (so a deleted or reset key
 * loses its budget on the first request a node refuses). Bounded, so a flood cannot grow it.
 */
export class KnownCredentials {
  private readonly seen: RecentlyUsed<string, { until: number; budget: CredentialBudget }>;

  constructor(
    capacity = 10_000,
    private readonly ttlMs = 10 * 60_000,
  ) {
    this.seen = new RecentlyUsed(capacity);
  }

  add(fingerprint: string, budget: CredentialBudget, now = Date.now()): void {
    this.seen.set(fingerprint, { until: now + this.ttlMs, budget });
  }

  forget(fingerprint: string): void {
    this.seen.delete(fingerprint);
  }

  /** The budget of a credential known to be good, or undefined. */
  budgetOf(fingerprint: string, now = Date.now()): CredentialBudget | undefined {
    const entry = this.seen.get(fingerprint);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.budget;
    this.seen.delete(fingerprint);
    return undefined;
  }
}

declare global {
  namespace Express {
    interface Locals {
      /** Set by the authorization stage when it let the request through to its operation. */
      principal?: Principal;
    }
  }
}

/** Who made a request that the authorization stage let through. */
export function principalOf(res: Response): Principal {
  const principal = res.locals.principal;
  if (principal === undefined) throw new Error('The authorization stage did not run for this request');
  return principal;
}

export interface AuthenticatorOptions {
  apiKeys: ApiKeyAuthenticator;
  db: Db;
  /** Signs and verifies access tokens. */
  secret: string;
  known: KnownCredentials;
  /** Skips the lookup of credentials that authenticated lately (only with Redis; see credentialCache.ts). */
  cache?: CredentialCache | undefined;
  /**
   * What a user's token may carry now (USER_TOKEN_SCOPES): a token issued under a wider setting
   * loses what the operator has taken back, at once.
   */
  userTokenScopes?: readonly Scope[] | undefined;
}

/** Resolves the principal of a request from whatever credentials it carries. */
export class Authenticator {
  constructor(private readonly options: AuthenticatorOptions) {}

  /** The principal, or a thrown `unauthenticated` DomainError (or whatever broke while checking). */
  async authenticate(req: Request): Promise<Principal> {
    const found = presentedCredentialsOf(req);
    if (found === undefined) throw unauthenticated(CREDENTIALS_REQUIRED);
    const { credentials, fingerprint } = found;
    const { known, cache } = this.options;
    // Read before the lookup: a change committed while it runs makes its entry stale at once.
    const generation = cache === undefined ? undefined : await cache.generation();
    const hit = generation === undefined ? undefined : cache?.get(fingerprint, generation);
    if (hit !== undefined) {
      known.add(fingerprint, hit.budget);
      return hit.principal;
    }
    try {
      const found = await this.lookUp(credentials, fingerprint);
      known.add(fingerprint, found.budget);
      if (generation !== undefined) cache?.set(fingerprint, generation, found);
      return found.principal;
    } catch (error) {
      if (error instanceof DomainError) {
        known.forget(fingerprint);
        cache?.forget(fingerprint);
      }
      throw error;
    }
  }

  private async lookUp(credentials: Credentials, fingerprint: string): Promise<CachedCredential> {
    const { apiKeys, db, secret } = this.options;
    if (credentials.kind === 'bearer') {
      const { principal: claimed, expiresAt } = await principalOfAccessToken(db, credentials.token, secret);
      const allowed = this.options.userTokenScopes ?? [];
      const principal: Principal =
        claimed.kind === 'user'
          ? { ...claimed, scopes: new Set(allowed.filter((scope) => claimed.scopes.has(scope))) }
          : claimed;
      return { principal, budget: { limitPerMinute: null, counter: `token:${fingerprint}` }, expiresAt };
    }
    // An API key's fingerprint is its stored digest: the key is hashed once per request.
    const { principal, rateLimitPerMinute, expiresAt } = await apiKeys.authenticate(fingerprint);
    return {
      principal,
      budget: { limitPerMinute: rateLimitPerMinute, counter: `apiKey:${principal.apiKeyId}` },
      expiresAt,
    };
  }
}

/**
 * The stage that authenticates and authorizes a request for one operation of the contract, then
 * lets it go on to validation; it runs first in the operation's route (src/http/routes.ts), so a
 * request is matched once for every stage. Public operations get the anonymous principal without
 * any lookup.
 */
export function authorize(operation: ContractOperation, authenticator: Authenticator): RequestHandler {
  const access = operation.access;
  if (access === 'public' && operation.acceptsCredentials) {
    // Anyone may call it; credentials presented are checked, and the handler sees whose they are.
    return async (req: Request, res: Response, next: NextFunction) => {
      try {
        res.locals.principal =
          presentedCredentialsOf(req) === undefined
            ? { kind: 'anonymous' as const }
            : await authenticator.authenticate(req);
        next();
      } catch (error) {
        next(error);
      }
    };
  }
  if (access === 'public') {
    // assertMayCall lets anyone call a public operation: nothing to check per request.
    return (_req, res, next) => {
      res.locals.principal = { kind: 'anonymous' as const };
      next();
    };
  }
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const principal = await authenticator.authenticate(req);
      assertMayCall(access, principal, operation.operationId);
      res.locals.principal = principal;
      next();
    } catch (error) {
      next(error);
    }
  };
}
