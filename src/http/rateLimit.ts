import type { Request, RequestHandler } from 'express';
import { type IncrementResponse, ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import type { ContractOperation } from '../contract.ts';
import type { SharedState } from '../state/port.ts';
import { type KnownCredentials, presentedCredentialsOf } from './auth.ts';
import { describeError } from './logging.ts';
import { problem, sendProblem } from './problem.ts';

/*
 * Rate limits for a headless CMS, on every request that reaches the limiter except those of the
 * operations the contract exempts (`x-rate-limited: false`: ping and the health checks):
 *
 * - a request with an API key or access token known to be good (KnownCredentials, filled by the
 *   authentication stage) is unlimited, unless its key has a `rateLimitPerMinute` of its own: then
 *   it is counted under the key's id, on every node together;
 * - anything else — no credentials, or a made-up, deleted or reset key — is counted against the
 *   sender's address, RATE_LIMIT_PER_MINUTE a minute (0: unlimited). Sending a new random key each
 *   time escapes nothing, and a flood is turned away before any lookup: the limiter runs before
 *   validation and authentication, which is why it learns a key's budget from KnownCredentials
 *   (the first request of a key counts against its address, until authentication has seen it).
 *
 * The counters live in the shared state (Redis with REDIS_URL, else the database).
 */

export const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * Whether a request is one of an operation marked `x-rate-limited: false`, by its method and path
 * (the limiter runs before the operation's route has matched it).
 */
export function exemptRequests(operations: readonly ContractOperation[]): (req: Request) => boolean {
  const exempt = operations
    .filter((operation) => !operation.rateLimited)
    .map((operation) => ({
      method: operation.method.toUpperCase(),
      path: new RegExp(
        `^${operation.path
          .split(/\{[^}]+\}/)
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/]+')}$`,
      ),
    }));
  return (req) => exempt.some(({ method, path }) => req.method === method && path.test(req.path));
}

export interface RateLimitOptions {
  /** Requests per address per window for requests without known-good credentials; 0: unlimited. */
  limit: number;
  /** Where the counters live: shared by every node. */
  state: SharedState;
  logger: Logger;
  /** Credentials this process has seen succeed, with their budgets (filled by authentication). */
  known: KnownCredentials;
  /** Requests never counted: those of the operations the contract exempts (exemptRequests). */
  exempt: (req: Request) => boolean;
}

/** Which counter a request counts against, and how many it may make; 'unlimited' for none. */
type Budget = { counter: string; limit: number; client: 'API key' | 'address' } | 'unlimited';

/** The client's address as every per-address limit counts it: an IPv6 address grouped to its /56. */
export function clientAddressOf(req: Request): string {
  return ipKeyGenerator(req.ip ?? 'unknown');
}

function budgetOf(req: Request, { known, limit, exempt }: RateLimitOptions): Budget {
  if (exempt(req)) return 'unlimited';
  const presented = presentedCredentialsOf(req);
  const budget = presented && known.budgetOf(presented.fingerprint);
  if (budget !== undefined) {
    if (budget.limitPerMinute === null) return 'unlimited';
    return { counter: budget.counter, limit: budget.limitPerMinute, client: 'API key' };
  }
  if (limit === 0) return 'unlimited';
  return {
    counter: `address:${clientAddressOf(req)}`,
    limit,
    client: 'address',
  };
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

export function rateLimiting(options: RateLimitOptions): RequestHandler {
  const { state, logger } = options;
  // The budget is decided once per request; express-rate-limit asks for it three times.
  const budgets = new WeakMap<Request, Budget>();
  const budget = (req: Request): Budget => {
    let decided = budgets.get(req);
    if (decided === undefined) {
      decided = budgetOf(req, options);
      budgets.set(req, decided);
    }
    return decided;
  };
  const counted = (req: Request) => {
    const decided = budget(req);
    if (decided === 'unlimited') throw new Error('an unlimited request was counted');
    return decided;
  };
  const limiter = rateLimit({
    windowMs: RATE_LIMIT_WINDOW_MS,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    skip: (req) => budget(req) === 'unlimited',
    limit: (req) => counted(req).limit,
    keyGenerator: (req) => counted(req).counter,
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
    handler: (req, res, _next, { windowMs }) => {
      const { limit, client } = counted(req);
      const retryAfter = String(res.getHeader('Retry-After') ?? Math.ceil(windowMs / 1000));
      sendProblem(
        res,
        problem(
          429,
          `Too many requests: at most ${limit} a minute for this ${client}; retry in ${retryAfter} s`,
        ),
        { 'Retry-After': retryAfter },
      );
    },
  });
  // An unlimited request (most authenticated ones) passes without entering the limiter: its
  // `skip` would let it through all the same, but only after two async frames and the caller's
  // address (`req.ip`, for a debug line) worked out on every request.
  return (req, res, next) => {
    if (budget(req) === 'unlimited') next();
    else void limiter(req, res, next);
  };
}
