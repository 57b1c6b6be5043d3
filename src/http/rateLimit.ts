import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RedisStore } from 'rate-limit-redis';
import { credentialsOf, fingerprintOf, type KnownCredentials } from './auth.ts';
import { describeError } from './logging.ts';
import { problem, sendProblem } from './problem.ts';

/*
 * Requests per client per minute, on every /api/v1 operation except ping. A client is its
 * credential (API key or bearer token, by fingerprint: the key itself is never kept) once that
 * credential has been seen to be valid, or else its address: a made-up or unknown credential
 * counts against the address that sends it, so sending a new random key each time escapes
 * nothing, and a flood of them is turned away before any lookup. With Redis the counters are shared by every node; without it each process counts
 * alone, which is right for a single node. The limit is checked before validation and
 * authentication, so a flood is turned away before it costs a database lookup.
 */

export const RATE_LIMIT_WINDOW_MS = 60_000;
const UNLIMITED_PATHS = new Set(['/api/v1/ping']);

export interface RateLimitOptions {
  /** Requests per client per window; 0 turns limiting off. */
  limit: number;
  /** Where the counters live when several nodes serve the API. */
  redis?: Redis | undefined;
  /** Prefix of the Redis keys (the deployment's REDIS_KEY_PREFIX). */
  prefix: string;
  logger: Logger;
  /** Credentials this process has seen succeed (filled by the authentication stage). */
  known: KnownCredentials;
}

function clientKey(req: Request, known: KnownCredentials): string {
  const credentials = credentialsOf(req);
  const fingerprint = credentials && fingerprintOf(credentials);
  if (fingerprint !== undefined && known.has(fingerprint)) return `credential:${fingerprint}`;
  return `address:${ipKeyGenerator(req.ip ?? 'unknown')}`;
}

export function rateLimiting({ limit, redis, prefix, logger, known }: RateLimitOptions): RequestHandler {
  const store = redis
    ? new RedisStore({
        prefix: `${prefix}rate:`,
        sendCommand: (command: string, ...args: string[]) =>
          redis.call(command, ...args) as Promise<number | string | (number | string)[]>,
      })
    : undefined;
  return rateLimit({
    windowMs: RATE_LIMIT_WINDOW_MS,
    limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    skip: (req) => limit === 0 || !req.path.startsWith('/api/v1/') || UNLIMITED_PATHS.has(req.path),
    keyGenerator: (req) => clientKey(req, known),
    ...(store && { store }),
    // A Redis outage must not take the API down with it: requests pass, and the log says why.
    passOnStoreError: true,
    logger: {
      error: (error, message) =>
        logger.error({ err: describeError(error) }, message ?? 'rate limiting failed'),
      warn: (error, message) =>
        logger.warn({ err: describeError(error) }, message ?? 'rate limiting warning'),
    },
    handler: (_req, res, _next, options) => {
      const retryAfter = String(res.getHeader('Retry-After') ?? Math.ceil(options.windowMs / 1000));
      sendProblem(
        res,
        problem(
          429,
          `Too many requests: at most ${options.limit} a minute per client; retry in ${retryAfter} s`,
        ),
        { 'Retry-After': retryAfter },
      );
    },
  });
}
