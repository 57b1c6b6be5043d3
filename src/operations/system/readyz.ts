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

/**
 * Readiness: the database answers a trivial query, and so does Redis when the shared state lives
 * there (REDIS_URL). Both are probed at once; a 503 names what does not answer (never its URL).
 */
export const readyz: Handler<'readyz'> = async (_input, { db, state, log }) => {
  const probes: [string, Promise<unknown>][] = [['the database', db.$queryRaw`SELECT 1`]];
  // Without Redis the shared state is the database itself, which the first probe covers.
  if (state.kind === 'redis') probes.push(['Redis', state.ping()]);
  const results = await Promise.allSettled(probes.map(([, probe]) => withTimeout(probe, READY_TIMEOUT_MS)));
  const down = probes.filter((_, index) => results[index]?.status === 'rejected').map(([name]) => name);
  if (down.length > 0) {
    for (const result of results) {
      if (result.status === 'rejected') log.warn({ err: result.reason }, 'readiness check failed');
    }
    const subject = down.join(' and ');
    throw unavailable(`Not ready: ${subject} ${down.length > 1 ? 'are' : 'is'} not reachable`);
  }
  return { status: 'ok' };
};
