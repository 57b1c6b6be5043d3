import type { NextFunction, Request, RequestHandler, Response } from 'express';
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
 * - a request without credentials is counted against the sender's address, RATE_LIMIT_PER_MINUTE
 *   a minute (0: unlimited);
 * - a request with credentials this worker has not seen succeed yet (a worker just started, or a
 *   made-up, deleted or reset key) is never charged to that anonymous budget: a valid key must
 *   not get 429 because anonymous clients behind the same address used it up. It is let through to
 *   authentication unless its address has already sent RATE_LIMIT_PER_MINUTE refused credentials
 *   this minute, and it is counted there only if authentication refuses it. Sending a new random
 *   key each time escapes nothing, and a flood of them is turned away before any lookup.
 *
 * The address is the client's as TRUST_PROXY resolves it (express's `req.ip`). The counters live in
 * the shared state (Redis with REDIS_URL, else the database).
 */

export const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * Whether a request is one of an operation marked `x-rate-limited: false`: the operation its
 * method and path matched (`operationOf`: the pipeline's match, made before the limiter runs —
 * src/http/pipeline.ts), by its own method (HEAD on a GET path is answered, and counted, apart).
 */
export function exemptRequests(
  operationOf: (req: Request) => ContractOperation | undefined,
): (req: Request) => boolean {
  return (req) => {
    const operation = operationOf(req);
    return operation !== undefined && !operation.rateLimited && req.method === operation.method.toUpperCase();
  };
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

/**
 * Which counter a request counts against, and how many it may make; 'unlimited' for none;
 * 'unverified' for credentials not known to be good yet (counted only if refused).
 */
type Budget = { counter: string; limit: number; client: 'API key' | 'address' } | 'unlimited' | Unverified;

/** Credentials (by fingerprint) not known to be good yet, and the address's budget of refusals. */
interface Unverified {
  unverified: string;
  limit: number;
}

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
  if (presented) return { unverified: presented.fingerprint, limit };
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

/** The 429 every limit answers, naming the limit and whom it counts. */
function refuse(res: Response, limit: number, client: string, retryAfter: string): void {
  sendProblem(
    res,
    problem(429, `Too many requests: at most ${limit} a minute for this ${client}; retry in ${retryAfter} s`),
    { 'Retry-After': retryAfter },
  );
}

/** The budget of refused credentials per address (see the top of this file). */
function refusedCredentials(
  options: RateLimitOptions,
): (req: Request, res: Response, next: NextFunction, decided: Unverified) => Promise<void> {
  const { state, known } = options;
  // Charges this worker has started but the store has not confirmed: the next request from the
  // same address waits for them, so that a client sending one bad key after another is counted exactly.
  const pending = new Map<string, Promise<unknown>>();
  return async (req, res, next, decided) => {
    const counter = `${KEY_PREFIX}credentials:${clientAddressOf(req)}`;
    await pending.get(counter);
    // Fails open like every counter: a store that does not answer counts nothing.
    const current = await state.get(counter);
    if (current !== undefined && current.count >= decided.limit) {
      const seconds = Math.max(1, Math.ceil((current.resetAt.getTime() - Date.now()) / 1000));
      refuse(res, decided.limit, 'address', String(seconds));
      return;
    }
    res.once('finish', () => {
      // Known now: authentication accepted them, and they are never charged here.
      if (known.budgetOf(decided.unverified) !== undefined) return;
      const charge = state.increment(counter, RATE_LIMIT_WINDOW_MS).finally(() => {
        if (pending.get(counter) === charge) pending.delete(counter);
      });
      pending.set(counter, charge);
    });
    next();
  };
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
    if (decided === 'unlimited' || 'unverified' in decided)
      throw new Error('this request is not counted here');
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
      refuse(res, limit, client, String(res.getHeader('Retry-After') ?? Math.ceil(windowMs / 1000)));
    },
  });
  // An unlimited request (most authenticated ones) passes without entering the limiter: its
  // `skip` would let it through all the same, but only after two async frames and the caller's
  // address (`req.ip`, for a debug line) worked out on every request.
  const unverified = refusedCredentials(options);
  return (req, res, next) => {
    const decided = budget(req);
    if (decided === 'unlimited') next();
    else if ('unverified' in decided) unverified(req, res, next, decided).catch(next);
    else void limiter(req, res, next);
  };
}
