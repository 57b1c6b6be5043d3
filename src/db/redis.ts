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

/** Connects and checks that Redis answers; a configured Redis that does not answer stops the start. */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = createRedis(url);
  try {
    await redis.connect();
    await redis.ping();
  } catch {
    redis.disconnect();
    // The URL may carry a password: say what failed without repeating it.
    throw new Error('REDIS_URL is set but Redis does not answer there');
  }
  return redis;
}
