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

export function runLoad(
  target: Target,
  scenario: string,
  request: HttpRequest,
  connections: number,
  seconds: number,
): Promise<LoadFigures> {
  return autocannon({
    url: `${target.base}${target.pathOf(request, scenario)}`,
    connections,
    duration: seconds,
    method: request.method,
    headers: { ...target.headers, ...(request.body ? { 'content-type': 'application/json' } : {}) },
    ...(request.body ? { body: request.body } : {}),
    timeout: 30,
  }).then(figures);
}
