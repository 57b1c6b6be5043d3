import { Agent, request } from 'node:http';

/*
 * Hostile anonymous senders (issue 15 §2): clients without credentials that post, as fast as they
 * are answered, a body made to be expensive to parse and walk — 5 MB of JSON holding a few hundred
 * thousand keys — to a protected operation. The service must answer them from their headers
 * (docs/security/requests.md), so that the other clients' latency barely moves: run.ts measures the
 * default list's p50 without and with them.
 */

export const ANONYMOUS_SENDERS = 6;

/** The contract's largest body size, filled with keys: `{"k0":0,"k1":0,…}`. */
export function hostileBody(limitBytes = 5 * 1024 * 1024): string {
  const parts: string[] = [];
  let length = 2;
  for (let n = 0; ; n++) {
    const part = `"k${n}":0`;
    if (length + part.length + 1 > limitBytes) break;
    parts.push(part);
    length += part.length + 1;
  }
  return `{${parts.join(',')}}`;
}

export interface SenderFigures {
  senders: number;
  bodyBytes: number;
  keys: number;
  /** Answers by status. */
  statuses: Record<string, number>;
  /** Sends the server cut off before an answer was read (it stopped reading the body and closed). */
  cutOff: number;
}

/** Sends the body from `senders` loops until stopped; each loop waits for its answer (or the cut). */
export function startAnonymousSenders(
  url: string,
  body: string,
  senders = ANONYMOUS_SENDERS,
): { stop(): Promise<SenderFigures> } {
  const agent = new Agent({ keepAlive: true, maxSockets: senders });
  const payload = Buffer.from(body);
  const statuses: Record<string, number> = {};
  let cutOff = 0;
  let stopped = false;
  const once = () =>
    new Promise<void>((resolve) => {
      let settled = false;
      const done = () => {
        if (!settled) {
          settled = true;
          resolve();
        }
      };
      const req = request(url, {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': payload.length },
      });
      req.on('response', (res) => {
        statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
        res.resume();
        res.on('end', done);
        res.on('error', done);
      });
      req.on('error', () => {
        if (!settled) cutOff++;
        done();
      });
      req.end(payload);
    });
  const loops = Array.from({ length: senders }, async () => {
    while (!stopped) await once();
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      agent.destroy();
      return {
        senders,
        bodyBytes: payload.length,
        keys: body.split(',').length,
        statuses,
        cutOff,
      };
    },
  };
}
