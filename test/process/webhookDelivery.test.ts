import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { createEmptyDatabase, type EmptyDatabase, testServerUrl } from '../support/database.ts';
import { testRedisKeyPrefix } from '../support/run.ts';
import { bootstrapKeyOf, freePort, post, type Service, startService, stopService } from './processes.ts';

/*
 * Webhook delivery by real service processes (the compiled `npm start`, WORKERS=0: one process per
 * node, its delivery worker beside its requests) to a receiver on 127.0.0.1, each message verified
 * with the `standardwebhooks` library:
 * - two nodes on one PostgreSQL database and one Redis, both delivering: each event arrives exactly
 *   once (counted by `webhook-id`), and the events of one content in the order they were written;
 * - a node killed with SIGKILL in the middle of writes and deliveries, then started again: every
 *   committed event (every acknowledged write's among them) arrives at least once, and an event
 *   arrives again only across the crash (once before it, once after) or after an attempt recorded as
 *   failed (a timeout on a loaded machine), with the same `webhook-id`.
 * No assertion on durations: every wait polls the database or the receiver until a generous deadline.
 */

const provider = testServerUrl() ? 'postgresql' : 'sqlite';
const redisUrl = process.env.TEST_REDIS_URL;

let database: EmptyDatabase | undefined;
let client: DbHandle | undefined;
let services: Service[] = [];
let receiver: Receiver | undefined;

afterEach(async () => {
  await Promise.all(services.map(stopService));
  services = [];
  await receiver?.close();
  receiver = undefined;
  await client?.db.$disconnect();
  client = undefined;
  await database?.drop();
  database = undefined;
});

interface Message {
  id: string;
  type: string;
  resourceId: number;
  title: string;
  /** The receiver's phase when it arrived (the kill test: before or after the crash). */
  phase: string;
}

interface Receiver {
  url: string;
  messages: Message[];
  /** Messages whose signature did not verify, or that were not JSON. */
  refused: string[];
  /** Set by the test; recorded with each message. */
  phase: string;
  /** The secret messages are verified with (the subscription's, once created). */
  secret: string;
  close(): Promise<void>;
}

/** A receiver that verifies each message, records it and answers 200 after `delayMs`. */
async function startReceiver(delayMs: number): Promise<Receiver> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        const verified = new Webhook(state.secret).verify(body, req.headers as Record<string, string>) as {
          type: string;
          data: { resourceId: number; payload: { title?: string } };
        };
        state.messages.push({
          id: String((req.headers as IncomingHttpHeaders)['webhook-id']),
          type: verified.type,
          resourceId: verified.data.resourceId,
          title: verified.data.payload.title ?? '',
          phase: state.phase,
        });
      } catch (error) {
        state.refused.push(`${String(error)}: ${body.slice(0, 200)}`);
      }
      setTimeout(() => res.end('ok'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const state: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    messages: [],
    refused: [],
    phase: 'start',
    secret: `whsec_${Buffer.alloc(24).toString('base64')}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return state;
}

const LISTENING = /"msg":"listening"/;

async function serve(env: Record<string, string>): Promise<{ service: Service; port: number }> {
  const port = await freePort();
  const service = startService({ ...env, PORT: String(port) });
  services.push(service);
  await service.waitFor(LISTENING, 120_000);
  return { service, port };
}

/** Polls `done` until it holds, failing with `describe()` after the deadline. */
async function until(done: () => Promise<boolean>, describe: () => string, deadlineMs = 180_000) {
  const deadline = Date.now() + deadlineMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${deadlineMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Subscribes the receiver to every content event, through the node on `port`. */
async function subscribe(port: number, key: string, url: string): Promise<string> {
  const created = await post(
    port,
    '/api/v1/webhooks',
    { url, eventTypes: ['content.*'] },
    { 'X-SS-API-KEY': key },
  );
  expect(created.status).toBe(201);
  return (created.json as { secret: string }).secret;
}

/** A new content in the demo's Tech news channel; its id. */
async function createContent(port: number, key: string, title: string): Promise<number> {
  const answer = await post(port, '/api/v1/contents/1/3', { title }, { 'X-SS-API-KEY': key });
  if (answer.status !== 200)
    throw new Error(`create answered ${answer.status}: ${JSON.stringify(answer.json)}`);
  return (answer.json as { id: number }).id;
}

async function updateContent(port: number, key: string, id: number, title: string): Promise<void> {
  const answer = await post(
    port,
    `/api/v1/contents/1/3/${id}/actions/update`,
    { title },
    { 'X-SS-API-KEY': key },
  );
  if (answer.status !== 200)
    throw new Error(`update answered ${answer.status}: ${JSON.stringify(answer.json)}`);
}

/** Deliveries not yet succeeded or given up. */
const pendingDeliveries = (handle: DbHandle) =>
  handle.db.webhookDelivery.count({ where: { status: 'pending' } });

function countsById(messages: readonly Message[]): Map<string, Message[]> {
  const byId = new Map<string, Message[]>();
  for (const message of messages) byId.set(message.id, [...(byId.get(message.id) ?? []), message]);
  return byId;
}

const bothNodes = provider === 'postgresql' && redisUrl !== undefined;

(bothNodes ? describe : describe.skip)(
  `two nodes on one PostgreSQL database and one Redis${bothNodes ? '' : ' (skipped: needs TEST_DATABASE_URL=postgresql://… and TEST_REDIS_URL)'}`,
  () => {
    test('both deliver; each event arrives exactly once, each content in order', async () => {
      database = await createEmptyDatabase();
      receiver = await startReceiver(20);
      const env = {
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl ?? '',
        REDIS_KEY_PREFIX: testRedisKeyPrefix(),
        WORKERS: '0',
        WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
      };
      const a = await serve({ ...env, SEED_DEMO: 'true' });
      const key = bootstrapKeyOf(a.service.output()) ?? '';
      expect(key).toMatch(/^cms_/);
      const b = await serve(env);
      receiver.secret = await subscribe(a.port, key, receiver.url);
      client = await createDb(database.url);
      const handle = client;
      const ports = [a.port, b.port];

      // Rounds of writes, half through each node, until both nodes have sent deliveries (their
      // workers poll independently: one could, by chance, claim a whole first round).
      const owners = new Set<string>();
      let written = 0;
      for (let round = 0; round < 5 && owners.size < 2; round += 1) {
        const ids = await Promise.all(
          Array.from({ length: 20 }, (_, i) => createContent(ports[i % 2] ?? 0, key, `r${round}c${i}`)),
        );
        await Promise.all(
          ids.map((id, i) => updateContent(ports[(i + 1) % 2] ?? 0, key, id, `r${round}u${i}`)),
        );
        written += ids.length * 2;
        await until(
          async () => (await pendingDeliveries(handle)) === 0 && (receiver?.messages.length ?? 0) >= written,
          () => `${receiver?.messages.length} of ${written} received`,
        );
        const rows = await handle.db.webhookDelivery.findMany({ select: { leaseOwner: true } });
        for (const row of rows) if (row.leaseOwner !== null) owners.add(row.leaseOwner.split(':')[1] ?? '');
      }
      expect(owners).toEqual(new Set([a.service.process.pid, b.service.process.pid].map(String)));

      const { messages, refused } = receiver;
      expect(refused).toEqual([]);
      const events = await handle.db.event.findMany({ where: { type: { startsWith: 'content.' } } });
      expect(events).toHaveLength(written);
      // A worker error (an outcome it could not record) would show below as a second send.
      const failures = [a, b].flatMap(({ service }) =>
        service
          .output()
          .split('\n')
          .filter((line) => line.includes('webhook delivery failed')),
      );
      expect(failures).toEqual([]);
      // One delivery per event, sent once: a second row or a second attempt would be a second send.
      const deliveries = await handle.db.webhookDelivery.findMany({
        select: { id: true, eventId: true, attempts: true, leaseOwner: true, status: true },
      });
      const perEvent = new Map<number, typeof deliveries>();
      for (const row of deliveries) perEvent.set(row.eventId, [...(perEvent.get(row.eventId) ?? []), row]);
      expect([...perEvent.values()].filter((rows) => rows.length > 1)).toEqual([]);
      const retried = deliveries.filter((row) => row.attempts !== 1).map((row) => row.id);
      const log = await handle.db.webhookAttempt.findMany({ where: { deliveryId: { in: retried } } });
      expect(log).toEqual([]);
      const byId = countsById(messages);
      expect([...byId.keys()].sort()).toEqual(events.map((event) => `evt_${event.id}`).sort());
      expect([...byId.values()].filter((copies) => copies.length > 1)).toEqual([]);
      // Each content's creation arrived before its update.
      const types = new Map<number, string[]>();
      for (const message of messages)
        types.set(message.resourceId, [...(types.get(message.resourceId) ?? []), message.type]);
      for (const sequence of types.values()) expect(sequence).toEqual(['content.created', 'content.updated']);
    }, 600_000);
  },
);

describe(`a node killed with SIGKILL mid-stream on ${provider}`, () => {
  test('after its restart every committed event arrives; again only across the crash or after a failed attempt', async () => {
    database = await createEmptyDatabase();
    // A slow receiver: writes outpace deliveries, some of which are in flight when the node dies.
    receiver = await startReceiver(200);
    const env = {
      DATABASE_URL: database.url,
      WORKERS: '0',
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
      // The shortest allowed: a delivery the dead node had leased is free again 30.5 s later.
      WEBHOOK_TIMEOUT_MS: '500',
    };
    const first = await serve({ ...env, SEED_DEMO: 'true' });
    const key = bootstrapKeyOf(first.service.output()) ?? '';
    expect(key).toMatch(/^cms_/);
    receiver.secret = await subscribe(first.port, key, receiver.url);
    client = await createDb(database.url);
    const handle = client;

    // Writers create and then update contents until the node dies; only answered writes count.
    const acknowledged: { id: number; title: string }[] = [];
    let dead = false;
    const writer = async (n: number) => {
      for (let i = 0; !dead; i += 1) {
        try {
          const title = `w${n}c${i}`;
          const id = await createContent(first.port, key, title);
          acknowledged.push({ id, title });
          const revised = `w${n}u${i}`;
          await updateContent(first.port, key, id, revised);
          acknowledged.push({ id, title: revised });
        } catch {
          // The node died under this request: whether it committed is read from the database.
          return;
        }
      }
    };
    receiver.phase = 'before';
    const writers = Array.from({ length: 4 }, (_, n) => writer(n));
    await until(
      async () => (receiver?.messages.length ?? 0) >= 20 && acknowledged.length >= 40,
      () => `${receiver?.messages.length} received, ${acknowledged.length} acknowledged`,
    );
    first.service.process.kill('SIGKILL');
    await first.service.exited;
    dead = true;
    await Promise.all(writers);
    // What makes the crash a test: events committed that had not arrived yet.
    const committedAtCrash = await handle.db.event.count({ where: { type: { startsWith: 'content.' } } });
    const undeliveredAtCrash =
      committedAtCrash - new Set(receiver.messages.map((message) => message.id)).size;
    expect(undeliveredAtCrash).toBeGreaterThan(0);

    receiver.phase = 'after';
    await serve(env);
    const events = await handle.db.event.findMany({ where: { type: { startsWith: 'content.' } } });
    await until(
      async () => {
        const received = new Set(receiver?.messages.map((message) => message.id));
        return (
          (await pendingDeliveries(handle)) === 0 && events.every((event) => received.has(`evt_${event.id}`))
        );
      },
      () =>
        `${receiver?.messages.length} received of ${events.length} events (${undeliveredAtCrash} undelivered at the crash)`,
    );

    const { messages, refused } = receiver;
    expect(refused).toEqual([]);
    // Every acknowledged write is among the committed events, and was delivered.
    const delivered = new Set(messages.map((message) => `${message.resourceId}:${message.title}`));
    const missing = acknowledged.filter((write) => !delivered.has(`${write.id}:${write.title}`));
    expect(missing).toEqual([]);
    // An event arrives more than once only where its sender could not know it had arrived: across
    // the crash (once before it, once after), or after an attempt recorded as failed (on a loaded
    // machine the receiver's answer can come after the 500 ms timeout: the delivery is then retried).
    const deliveries = await handle.db.webhookDelivery.findMany({ select: { id: true, eventId: true } });
    const attempts = await handle.db.webhookAttempt.findMany({
      select: { deliveryId: true, statusCode: true },
    });
    const failedByEvent = new Map<string, number>();
    const eventOf = new Map(deliveries.map((row) => [row.id, `evt_${row.eventId}`]));
    for (const attempt of attempts) {
      if (attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300) continue;
      const id = eventOf.get(attempt.deliveryId) ?? '';
      failedByEvent.set(id, (failedByEvent.get(id) ?? 0) + 1);
    }
    const unexplained = [...countsById(messages)].filter(([id, copies]) => {
      const before = copies.filter((message) => message.phase === 'before').length;
      const crossed = before > 0 && before < copies.length ? 1 : 0;
      return copies.length > 1 + crossed + (failedByEvent.get(id) ?? 0);
    });
    expect(unexplained).toEqual([]);
    // Nothing arrives that was not committed.
    const committed = new Set(events.map((event) => `evt_${event.id}`));
    expect(messages.filter((message) => !committed.has(message.id))).toEqual([]);
  }, 600_000);
});
