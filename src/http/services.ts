import type { Logger } from 'pino';
import type { Sandbox } from '../db/sandbox/index.ts';
import type { HandlerServices } from '../operations/types.ts';
import type { BackgroundTasks } from './background.ts';
import type { ServiceMetrics } from './metrics.ts';

/**
 * Everything one serving process runs on, made once by the composition root (src/compose.ts) — by
 * the worker, and by the tests' support the same way — and handed to createApp, whose handlers see
 * the HandlerServices part of it. It owns what it made: close() ends all of it, in order.
 */
export interface Services extends Omit<HandlerServices, 'sandbox'> {
  logger: Logger;
  sandbox: Sandbox;
  /** Writes requests start without waiting for them (close() awaits them first). */
  background: BackgroundTasks;
  /** Counts and times every request when metrics are on (METRICS_PORT); absent, nothing is recorded. */
  metrics?: ServiceMetrics | undefined;
  /**
   * Waits for the background writes, then closes what these services made (the metrics endpoint,
   * the shared state, the sandbox, the database client, the Redis connection), never what they were
   * given. Call it once no request is running.
   */
  close(): Promise<void>;
}
