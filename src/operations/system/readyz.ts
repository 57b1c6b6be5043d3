import { unavailable } from '../../domain/errors.ts';
import type { Handler } from '../types.ts';

/**
 * An orchestrator probes this every few seconds and expects a quick answer; a database that takes
 * longer than this to answer SELECT 1 is as good as down for serving traffic.
 */
export const READY_TIMEOUT_MS = 2000;

class ProbeTimeout extends Error {
  override name = 'ProbeTimeout';
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a node without Redis cannot do (its counters, marks and signals fail as src/state says). */
export const WITHOUT_REDIS =
  'Redis is not reachable: rate limits are not counted, single-use marks are refused (503), restart signals do not reach other nodes';

/**
 * Readiness: the database answers a trivial query; without it nothing can be served, so a 503 that
 * says so (never its URL). Redis, when the shared state lives there (REDIS_URL), is probed at the
 * same time, but the service serves without it by design (src/state/failPolicy.ts): a Redis that
 * does not answer makes the node `degraded`, still ready. Failing readiness for it would make a load
 * balancer take every node out at once.
 */
export const readyz: Handler<'readyz'> = async (_input, { db, state, log }) => {
  const database = withTimeout(db.$queryRaw`SELECT 1`, READY_TIMEOUT_MS);
  // Without Redis the shared state is the database itself, which the first probe covers.
  const redis = state.kind === 'redis' ? withTimeout(state.ping(), READY_TIMEOUT_MS) : Promise.resolve();
  const [databaseResult, redisResult] = await Promise.allSettled([database, redis]);
  if (databaseResult.status === 'rejected') {
    log.warn({ err: databaseResult.reason }, 'readiness check failed');
    throw unavailable('Not ready: the database is not reachable');
  }
  if (redisResult.status === 'rejected') {
    log.warn({ err: redisResult.reason }, 'readiness check: Redis does not answer (serving without it)');
    return { status: 'degraded', degraded: [WITHOUT_REDIS] };
  }
  return { status: 'ok' };
};
