import cors, { type CorsOptions } from 'cors';
import { type RequestHandler, Router } from 'express';
import type { CorsOrigins } from '../config.ts';
import type { Contract } from '../contract.ts';
import { toExpressPath } from './expressPaths.ts';

/*
 * Browsers as clients (docs/api/cors-and-query-strings.md). With CORS_ORIGIN set, the origins it
 * names (or any, with `*`) may call the API from a page: a preflight is answered from the contract
 * — the methods of the path, the request headers the API reads — and every answer, errors and 429s
 * included, carries the origin and the response headers a client needs to read. Without it, no CORS
 * header is ever sent. Either way, OPTIONS on a path the service serves is a 204 with `Allow`.
 */

/** The request headers the API reads: what a preflight allows. */
export const CORS_ALLOWED_HEADERS = [
  'X-SS-API-KEY',
  'Authorization',
  'Content-Type',
  'If-Match',
  'If-None-Match',
  'Idempotency-Key',
  'X-Request-Id',
];

/** Response headers a page may read besides the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'WWW-Authenticate',
  'X-Request-Id',
];

/** How long a browser may keep a preflight's answer. */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * The methods of each path of the contract, and of the service's own paths (read-only), as an
 * `Allow` header lists them.
 */
function methodsByPath(contract: Contract, readOnlyPaths: readonly string[]): Map<string, string[]> {
  const byPath = new Map<string, Set<string>>(readOnlyPaths.map((path) => [path, new Set(['GET', 'HEAD'])]));
  for (const operation of contract.operations) {
    const methods = byPath.get(operation.path) ?? new Set<string>();
    methods.add(operation.method.toUpperCase());
    // express answers HEAD on every GET route.
    if (operation.method === 'get') methods.add('HEAD');
    byPath.set(operation.path, methods);
  }
  return new Map([...byPath].map(([path, methods]) => [path, [...methods, 'OPTIONS']]));
}

function corsOptions(origins: CorsOrigins): CorsOptions {
  return {
    // An exact list: the request's origin is echoed when listed (with Vary: Origin), else nothing.
    origin: origins === '*' ? '*' : [...origins],
    // Credentials (the captcha's cookie) only for named origins: browsers refuse them with `*`.
    credentials: origins !== '*',
    exposedHeaders: CORS_EXPOSED_HEADERS,
  };
}

/**
 * The app's CORS stage: OPTIONS on an operation's path (a preflight, or a plain OPTIONS) is answered
 * here; any other request gets the CORS headers when its origin is allowed, and goes on.
 */
export function crossOrigin(
  contract: Contract,
  origins: CorsOrigins | undefined,
  readOnlyPaths: readonly string[] = [],
): RequestHandler {
  const common = origins === undefined ? undefined : corsOptions(origins);
  const options = Router();
  for (const [path, methods] of methodsByPath(contract, readOnlyPaths)) {
    const allow = methods.join(', ');
    const preflight =
      common &&
      cors({
        ...common,
        methods,
        allowedHeaders: CORS_ALLOWED_HEADERS,
        maxAge: CORS_MAX_AGE_SECONDS,
        optionsSuccessStatus: 204,
      });
    options.options(toExpressPath(path), (req, res, next) => {
      res.setHeader('Allow', allow);
      const isPreflight =
        req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
      if (preflight !== undefined && isPreflight) return preflight(req, res, next);
      res.status(204).end();
    });
  }
  const headers = common && cors(common);
  return (req, res, next) => {
    if (req.method === 'OPTIONS') return options(req, res, next);
    if (headers === undefined) return next();
    headers(req, res, next);
  };
}
