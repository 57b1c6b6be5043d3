import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { DatabaseSharedState } from './database.ts';
import { withFailPolicy } from './failPolicy.ts';
import type { SharedState } from './port.ts';
import { RedisSharedState } from './redis.ts';

export { withFailPolicy } from './failPolicy.ts';
export type { CounterState, SharedState, SharedStateKind, SignalListener, Unsubscribe } from './port.ts';
export { SharedStateUnavailable } from './port.ts';

export interface SharedStateOptions {
  db: Db;
  /** When given (REDIS_URL is set), the state lives in Redis; otherwise in the database. */
  redis?: Redis | undefined;
  /** Prefix of every Redis key (REDIS_KEY_PREFIX); the database is one deployment's alone. */
  redisKeyPrefix: string;
  logger: Logger;
  /** How often the database store looks for signals (tests shorten it). */
  signalPollIntervalMs?: number;
  /** The store did not answer at start: the fail policy begins as if it had just failed. */
  startDown?: boolean;
}

/** The shared state of this deployment, with the service's fail policy applied. */
export function createSharedState(options: SharedStateOptions): SharedState {
  const { db, redis, redisKeyPrefix, logger } = options;
  const store =
    redis === undefined
      ? new DatabaseSharedState(db, {
          logger,
          ...(options.signalPollIntervalMs !== undefined && { pollIntervalMs: options.signalPollIntervalMs }),
        })
      : new RedisSharedState(redis, redisKeyPrefix);
  return withFailPolicy(store, logger, { startDown: options.startDown === true });
}
