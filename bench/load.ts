import autocannon, { type Result } from 'autocannon';
import type { HttpRequest } from './scenarios.ts';

/** One measured load: what the tables and the JSON report hold. */
export interface LoadFigures {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Mean bytes per response (headers included), from autocannon's throughput. */
  bytesPerResponse: number;
  non2xx: number;
  errors: number;
  /** True when the timed run completed too few requests and the figures come from a run by count. */
  byCount?: boolean;
}

function figures(result: Result): LoadFigures {
  const requests = result.requests.total;
  return {
    // Over the measured time itself: autocannon's own average is per whole second, 0 on short runs.
    reqPerSec: result.duration > 0 ? requests / result.duration : 0,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests,
    bytesPerResponse: requests > 0 ? Math.round(result.throughput.total / requests) : 0,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

export interface Target {
  /** Base URL (no trailing slash). */
  base: string;
  headers: Record<string, string>;
  /** Where the scenario's request goes on that target: the service's path, or a floor's /<scenario>. */
  pathOf(request: HttpRequest, scenario: string): string;
}

/** What a scenario's request sends to a target: the target's headers, the scenario's, the body's type. */
export function requestHeaders(
  target: Pick<Target, 'headers'>,
  request: HttpRequest,
): Record<string, string> {
  return {
    ...target.headers,
    ...request.headers,
    ...(request.body ? { 'content-type': 'application/json' } : {}),
  };
}

export function runLoad(
  target: Target,
  scenario: string,
  request: HttpRequest,
  connections: number,
  seconds: number,
  amount?: number,
): Promise<LoadFigures> {
  const run = autocannon({
    url: `${target.base}${target.pathOf(request, scenario)}`,
    connections,
    // With an amount, autocannon runs until that many requests completed, whatever the time.
    ...(amount ? { amount } : { duration: seconds }),
    method: request.method,
    headers: requestHeaders(target, request),
    ...(request.body ? { body: request.body } : {}),
    timeout: 300,
  });
  return Promise.resolve(run).then(figures);
}

/**
 * Waits until the target has worked off what the last run left queued (autocannon closes its
 * connections at the end, but a server that is behind — a synchronous SQLite driver, a full pool —
 * still runs the requests it accepted): one more request of the same kind queues behind them.
 * Without this, a slow scenario's backlog would be charged to the next run.
 */
export async function drain(target: Target, scenario: string, request: HttpRequest): Promise<void> {
  const response = await fetch(`${target.base}${target.pathOf(request, scenario)}`, {
    method: request.method,
    headers: requestHeaders(target, request),
    ...(request.body ? { body: request.body } : {}),
    signal: AbortSignal.timeout(600000),
  });
  await response.arrayBuffer();
}

/**
 * A timed run, then a drain; when the run completed fewer requests than there are connections (a
 * scenario slower than the run is long), the figures come from a run of 2 requests per connection
 * instead, so that a slow target gets a latency and a rate rather than zeros.
 */
export async function measureLoad(
  target: Target,
  scenario: string,
  request: HttpRequest,
  connections: number,
  seconds: number,
): Promise<LoadFigures> {
  const timed = await runLoad(target, scenario, request, connections, seconds);
  await drain(target, scenario, request);
  if (timed.requests >= connections || timed.non2xx + timed.errors > 0) return timed;
  const counted = await runLoad(target, scenario, request, connections, seconds, 2 * connections);
  await drain(target, scenario, request);
  return { ...counted, byCount: true };
}
