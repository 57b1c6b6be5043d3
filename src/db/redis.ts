import { Redis } from 'ioredis';

/**
 * A Redis client for state shared by every node. Commands give up after a second instead of
 * queueing while Redis is away, so a Redis outage slows no request down (callers fail open).
 */
export function createRedis(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 1000, lazyConnect: true });
  // Connection errors also fail the commands, where the shared-state fail policy logs them (without
  // the URL). Without a listener ioredis prints each reconnect attempt as an "Unhandled error event".
  redis.on('error', () => {});
  return redis;
}

export const REDIS_DOES_NOT_ANSWER = 'REDIS_URL is set but Redis does not answer there';

/**
 * Connects and checks that Redis answers; a configured Redis that does not answer stops the start.
 * With `failOpen` (a worker replacing another while the node serves) it does not: the client is
 * returned all the same, keeps reconnecting by itself, and the shared state's fail policy applies
 * until it answers; `onUnavailable` is told.
 */
export async function connectRedis(
  url: string,
  options: { failOpen?: boolean; onUnavailable?: () => void } = {},
): Promise<Redis> {
  const redis = createRedis(url);
  try {
    await redis.connect();
    await redis.ping();
  } catch {
    if (options.failOpen) {
      options.onUnavailable?.();
      return redis;
    }
    redis.disconnect();
    // The URL may carry a password: say what failed without repeating it.
    throw new Error(REDIS_DOES_NOT_ANSWER);
  }
  return redis;
}
