import { serviceUnavailable } from '../../http/problem.ts';
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

/** Readiness: the database answers a trivial query. */
export const readyz: Handler<'readyz'> = async (_input, { db, log }) => {
  try {
    await withTimeout(db.$queryRaw`SELECT 1`, READY_TIMEOUT_MS);
  } catch (error) {
    log.warn({ err: error }, 'readiness check failed: database not reachable');
    throw serviceUnavailable('The database is not reachable');
  }
  return { status: 'ok' };
};
