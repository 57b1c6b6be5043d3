import type { Request, RequestHandler } from 'express';
import { type IncrementResponse, ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import type { SharedState } from '../state/port.ts';
import { credentialsOf, fingerprintOf, type KnownCredentials } from './auth.ts';
import { describeError } from './logging.ts';
import { problem, sendProblem } from './problem.ts';

/*
 * Requests per client per minute, on every /api/v1 operation except ping. A client is its
 * credential (API key or bearer token, by fingerprint: the key itself is never kept) once that
 * credential has been seen to be valid, or else its address: a made-up or unknown credential
 * counts against the address that sends it, so sending a new random key each time escapes
 * nothing, and a flood of them is turned away before any lookup. The counters live in the shared
 * state (Redis with REDIS_URL, else the database), so every node counts the same client together.
 * The limit is checked before validation and authentication, so a flood is turned away before it
 * costs a credential lookup.
 */

export const RATE_LIMIT_WINDOW_MS = 60_000;
const UNLIMITED_PATHS = new Set(['/api/v1/ping']);

export interface RateLimitOptions {
  /** Requests per client per window; 0 turns limiting off. */
  limit: number;
  /** Where the counters live: shared by every node. */
  state: SharedState;
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

/** Raised for a hit the shared state could not count; the fail policy has already logged why. */
class NotCounted extends Error {
  override name = 'NotCounted';
}

const KEY_PREFIX = 'rate:';

/**
 * express-rate-limit's store over the shared-state port. A hit that could not be counted (the
 * store is down and counters fail open) is reported as a store error, which the limiter's
 * passOnStoreError turns into "let the request through".
 */
export class SharedStateStore implements Store {
  readonly localKeys = false;
  readonly prefix = KEY_PREFIX;
  private windowMs = RATE_LIMIT_WINDOW_MS;

  constructor(private readonly state: SharedState) {}

  init(options: { windowMs: number }): void {
    this.windowMs = options.windowMs;
  }

  async increment(key: string): Promise<IncrementResponse> {
    const { count, resetAt } = await this.state.increment(`${KEY_PREFIX}${key}`, this.windowMs);
    if (count === 0) throw new NotCounted('the hit was not counted');
    return { totalHits: count, resetTime: resetAt };
  }

  decrement(key: string): Promise<void> {
    return this.state.decrement(`${KEY_PREFIX}${key}`);
  }

  resetKey(key: string): Promise<void> {
    return this.state.reset(`${KEY_PREFIX}${key}`);
  }
}

export function rateLimiting({ limit, state, logger, known }: RateLimitOptions): RequestHandler {
  return rateLimit({
    windowMs: RATE_LIMIT_WINDOW_MS,
    limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    skip: (req) => limit === 0 || !req.path.startsWith('/api/v1/') || UNLIMITED_PATHS.has(req.path),
    keyGenerator: (req) => clientKey(req, known),
    store: new SharedStateStore(state),
    // An outage of the shared state must not take the API down with it: requests pass (the fail
    // policy of src/state logs it, throttled).
    passOnStoreError: true,
    logger: {
      error: (error, message) => {
        if (error instanceof NotCounted) return;
        logger.error({ err: describeError(error) }, message ?? 'rate limiting failed');
      },
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
