import { Agent, request } from 'node:http';
import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { createEmptyDatabase, type EmptyDatabase, testServerUrl } from '../support/database.ts';
import { bootstrapKeyOf, freePort, type Service, startService, stopService } from './processes.ts';

/*
 * Rate limits as clients meet them: `npm start`'s supervisor with two workers, and clients that keep
 * their connections alive (one agent, a few sockets used again and again). The supervisor hands each
 * new connection to the next worker, so the sockets land on both workers and every request on a
 * socket stays on its worker: the budgets must hold across the workers all the same (the counters
 * are in the shared state), for anonymous senders and for a key with a limit of its own.
 */

const provider = testServerUrl() ? 'postgresql' : 'sqlite';
jest.setTimeout(180_000);

let database: EmptyDatabase | undefined;
let service: Service | undefined;

afterEach(async () => {
  await stopService(service);
  service = undefined;
  await database?.drop();
  database = undefined;
});

interface Answer {
  status: number;
  text: string;
  /** The client side's port: the same port again means the same kept-alive connection. */
  localPort: number | undefined;
}

function send(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, localPort: req.socket?.localPort }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const LIMIT = 12;
const SOCKETS = 4;

/** `count` requests over SOCKETS kept-alive connections, SOCKETS at a time. */
async function burst(count: number, one: () => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let sent = 0; sent < count; sent += SOCKETS) {
    answers.push(...(await Promise.all(Array.from({ length: Math.min(SOCKETS, count - sent) }, one))));
  }
  return answers;
}

describe(`rate limits with keep-alive clients, two workers, ${provider}`, () => {
  test('an anonymous address and a limited key get their budgets exactly, across both workers, on kept-alive connections', async () => {
    database = await createEmptyDatabase();
    const port = await freePort();
    service = startService({
      DATABASE_URL: database.url,
      PORT: String(port),
      SEED_DEMO: 'true',
      WORKERS: '2',
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
    });
    await service.waitFor(/"msg":"workers ready"/, 60_000);
    const adminKey = bootstrapKeyOf(service.output());
    if (adminKey === undefined) throw new Error(`no bootstrap key:\n${service.output()}`);
    const agent = new Agent({ keepAlive: true, maxSockets: SOCKETS });
    try {
      // A key of its own limit, made by the all-scope key (unlimited itself).
      const made = await send(
        agent,
        port,
        'POST',
        '/api/v1/apiKeys',
        { 'x-ss-api-key': adminKey, 'content-type': 'application/json' },
        JSON.stringify({ title: 'limited', scopes: ['Contents'], rateLimitPerMinute: LIMIT }),
      );
      expect(made.status).toBe(201);
      const limitedKey = (JSON.parse(made.text) as { key: string }).key;

      // Anonymous: counted per address on every worker together.
      const anonymous = await burst(LIMIT * 3, () => send(agent, port, 'GET', '/api/v1/stl/sites?siteId=1'));
      expect(anonymous.filter(({ status }) => status !== 429)).toHaveLength(LIMIT);
      expect(anonymous.filter(({ status }) => status === 429)).toHaveLength(LIMIT * 2);
      expect(anonymous.filter(({ status }) => status !== 429 && status !== 401)).toEqual([]);

      // The limited key: its own budget, under its id, whichever worker each connection reached.
      // Requests of the key that reach a worker before it has seen the key succeed are let through
      // to authentication uncounted (src/http/rateLimit.ts): at most the first burst, SOCKETS of them.
      const keyed = await burst(LIMIT * 3, () =>
        send(
          agent,
          port,
          'POST',
          '/api/v1/contents',
          { 'x-ss-api-key': limitedKey, 'content-type': 'application/json' },
          JSON.stringify({ siteId: 1, perPage: 1 }),
        ),
      );
      const passed = keyed.filter(({ status }) => status === 200).length;
      expect(keyed.filter(({ status }) => status !== 200 && status !== 429)).toEqual([]);
      expect(passed).toBeGreaterThanOrEqual(LIMIT);
      expect(passed).toBeLessThanOrEqual(LIMIT + SOCKETS);
      expect(keyed.filter(({ status }) => status === 429).length).toBe(LIMIT * 3 - passed);

      // The admin key stays unlimited beside them.
      expect((await send(agent, port, 'GET', '/api/v1/apiKeys', { 'x-ss-api-key': adminKey })).status).toBe(
        200,
      );

      // Kept alive: every request of the bursts went over at most SOCKETS connections.
      const ports = new Set([...anonymous, ...keyed].map(({ localPort }) => localPort));
      expect(ports.size).toBeGreaterThan(1);
      expect(ports.size).toBeLessThanOrEqual(SOCKETS);
    } finally {
      agent.destroy();
    }
  });
});
