import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import {
  claimDeliveries,
  DeliveryWorker,
  MAX_ATTEMPTS,
  type WorkerOptions,
} from '../../src/domain/events/delivery.ts';
import { OutboundPolicy } from '../../src/domain/events/outbound.ts';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { type Listening, listen } from '../support/server.ts';

/*
 * Webhooks end to end on the test database: subscriptions managed over HTTP, events delivered by
 * the real delivery worker to a receiver on 127.0.0.1 (allowed through WEBHOOK_ALLOWED_ADDRESSES'
 * setting), signatures checked with the `standardwebhooks` library, retries, Retry-After, order per
 * resource, giving up, outbound refusals, and two workers sharing one queue without sending twice.
 */

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let app: TestApp;
let key: string;
let server: Listening;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** What the receiver answers next (status, headers); 200 when empty. */
const answers: { status: number; headers?: Record<string, string>; match?: string }[] = [];

beforeAll(async () => {
  ({ app, key } = await startFixtureApp('all', {
    config: { events: { retentionDays: 30, webhookTimeoutMs: 5000, allowedAddresses: ['127.0.0.1'] } },
  }));
  server = await listen(app.app);
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const body = Buffer.concat(chunks).toString('utf8');
      // The first answer whose `match` the body contains (or that has none) answers it.
      const index = answers.findIndex((a) => a.match === undefined || body.includes(a.match));
      const answer = index < 0 ? { status: 200 } : (answers.splice(index, 1)[0] ?? { status: 200 });
      res.writeHead(answer.status, answer.headers);
      res.end(`answer ${answer.status}`);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
  await server.close();
  await app.close();
});

beforeEach(async () => {
  received.length = 0;
  answers.length = 0;
  // Each test starts with no subscription and nothing queued.
  await app.db.webhookAttempt.deleteMany();
  await app.db.webhookDelivery.deleteMany();
  await app.db.webhookSubscription.deleteMany();
  await app.db.event.updateMany({ data: { dispatched: true } });
});

async function call(method: string, path: string, body?: unknown, credential: string | null = key) {
  const response = await fetch(`${server.base}${path}`, {
    method,
    headers: {
      ...(credential === null ? {} : { 'X-SS-API-KEY': credential }),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

function worker(owner: string, allowed: readonly string[] = ['127.0.0.1']): DeliveryWorker {
  const options: WorkerOptions = {
    db: app.db,
    provider: app.provider,
    policy: new OutboundPolicy(allowed),
    timeoutMs: 5000,
    owner,
    retentionDays: 30,
  };
  return new DeliveryWorker(options);
}

/** Ticks until a tick finds nothing to do. */
async function drain(...workers: DeliveryWorker[]): Promise<void> {
  for (let round = 0; round < 200; round += 1) {
    const worked = await Promise.all(workers.map((w) => w.tick()));
    if (worked.every((n) => n === 0)) return;
  }
  throw new Error('the queue never drained');
}

async function subscribe(extra: Record<string, unknown> = {}) {
  const created = await call('POST', '/api/v1/webhooks', {
    url: receiverUrl,
    eventTypes: ['content.*'],
    ...extra,
  });
  expect(created.status).toBe(201);
  return created.json as { secret: string; webhook: { id: number } };
}

const updateContent = async (id: number, title: string) =>
  expect((await call('POST', `/api/v1/contents/1/2/${id}/actions/update`, { title })).status).toBe(200);

const verified = (secret: string, message: Received) =>
  new Webhook(secret).verify(message.body, message.headers as Record<string, string>) as {
    type: string;
    data: { resourceId: number; payload: Record<string, unknown> };
  };

describe('webhook subscriptions', () => {
  test('create answers the secret once; list and get never show it', async () => {
    const { secret, webhook } = await subscribe({ description: 'site build', siteId: 1 });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const listed = await call('GET', '/api/v1/webhooks');
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual({
      value: [
        expect.objectContaining({
          id: webhook.id,
          url: receiverUrl,
          eventTypes: ['content.*'],
          siteId: 1,
          channelId: null,
          active: true,
          description: 'site build',
          disabledReason: null,
        }),
      ],
    });
    expect(listed.text).not.toContain(secret);
    const one = await call('GET', `/api/v1/webhooks/${webhook.id}`);
    expect(one.status).toBe(200);
    expect(one.text).not.toContain(secret);
    const changed = await call('POST', `/api/v1/webhooks/${webhook.id}/actions/update`, { active: false });
    expect(changed.json).toMatchObject({ active: false, url: receiverUrl });
    expect((await call('POST', `/api/v1/webhooks/${webhook.id}/actions/delete`)).status).toBe(200);
    expect((await call('GET', `/api/v1/webhooks/${webhook.id}`)).status).toBe(404);
  });

  test('refuses bad URLs, unknown types, missing scope and credentials', async () => {
    for (const url of [
      'file:///etc/passwd',
      'http://10.0.0.8/hook',
      'http://[::1]/hook',
      'http://169.254.169.254/',
      'not a url',
    ]) {
      const refused = await call('POST', '/api/v1/webhooks', { url, eventTypes: ['*'] });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('url');
    }
    const badType = await call('POST', '/api/v1/webhooks', {
      url: receiverUrl,
      eventTypes: ['content.exploded'],
    });
    expect(badType.status).toBe(400);
    expect(badType.text).toContain('content.exploded');
    expect((await call('GET', '/api/v1/webhooks', undefined, null)).status).toBe(401);
    const contentsOnly = await app.createApiKey(['Contents']);
    expect((await call('GET', '/api/v1/webhooks', undefined, contentsOnly)).status).toBe(403);
    expect((await call('POST', '/api/v1/webhooks/999/actions/rotateSecret', {})).status).toBe(404);
  });

  test('a channel filter needs a site: its own, or on an update the subscription one', async () => {
    const withSite = (await subscribe({ siteId: 1 })).webhook;
    const narrowed = await call('POST', `/api/v1/webhooks/${withSite.id}/actions/update`, { channelId: 2 });
    expect(narrowed.status).toBe(200);
    expect(narrowed.json).toMatchObject({ siteId: 1, channelId: 2 });
    const anySite = (await subscribe()).webhook;
    const refused = await call('POST', `/api/v1/webhooks/${anySite.id}/actions/update`, { channelId: 2 });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('channelId');
    const created = await call('POST', '/api/v1/webhooks', {
      url: receiverUrl,
      eventTypes: ['*'],
      channelId: 2,
    });
    expect(created.status).toBe(400);
  });
});

describe('delivery', () => {
  test('a write is delivered signed per Standard Webhooks, with the event as data', async () => {
    const { secret } = await subscribe();
    await updateContent(1, 'Delivered');
    await drain(worker('a'));
    expect(received).toHaveLength(1);
    const message = received[0] as Received;
    expect(message.headers['webhook-id']).toMatch(/^evt_\d+$/);
    const payload = verified(secret, message);
    expect(payload).toMatchObject({
      type: 'content.updated',
      data: { resourceId: 1, payload: { title: 'Delivered' } },
    });
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`).verify(
        message.body,
        message.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  test('a failed attempt is retried on the schedule (or Retry-After), in order per resource', async () => {
    const { webhook } = await subscribe();
    answers.push({ status: 500, match: '"first"' });
    await updateContent(1, 'first');
    await updateContent(1, 'second');
    await updateContent(2, 'other resource');
    const w = worker('a');
    await drain(w);
    // Content 1's first event failed: its second waits; content 2 is not held up.
    expect(
      received
        .map((m) => (JSON.parse(m.body) as { data: { payload: { title: string } } }).data.payload.title)
        .sort(),
    ).toEqual(['first', 'other resource']);
    const failed = await app.db.webhookDelivery.findFirst({
      where: { subscriptionId: webhook.id, attempts: 1, status: 'pending' },
    });
    const attempt = await app.db.webhookAttempt.findFirst({ where: { deliveryId: failed?.id } });
    const delay = (failed?.nextAttemptAt.getTime() ?? 0) - (attempt?.at.getTime() ?? 0);
    expect(delay).toBeGreaterThanOrEqual(4000 - 50);
    expect(delay).toBeLessThanOrEqual(6000 + 60_000);

    // Due again: it is sent, answered 503 with Retry-After: 120.
    answers.push({ status: 503, headers: { 'Retry-After': '120' } });
    await app.db.webhookDelivery.updateMany({
      where: { id: failed?.id },
      data: { nextAttemptAt: new Date(0) },
    });
    const before = Date.now();
    await drain(w);
    const retried = await app.db.webhookDelivery.findUnique({ where: { id: failed?.id ?? 0 } });
    expect(retried?.attempts).toBe(2);
    expect((retried?.nextAttemptAt.getTime() ?? 0) - before).toBeGreaterThanOrEqual(119_000);

    // Due again and answered: then the second event of content 1 follows.
    await app.db.webhookDelivery.updateMany({
      where: { id: failed?.id },
      data: { nextAttemptAt: new Date(0) },
    });
    await drain(w);
    const titles = received.map(
      (m) => (JSON.parse(m.body) as { data: { payload: { title: string } } }).data.payload.title,
    );
    expect(titles.slice(2)).toEqual(['first', 'first', 'second']);

    const log = await call('GET', `/api/v1/webhooks/${webhook.id}/deliveries?limit=10`);
    expect(log.status).toBe(200);
    const first = (
      log.json as {
        deliveries: {
          eventType: string;
          status: string;
          log: { statusCode: number; responseBody: string }[];
        }[];
      }
    ).deliveries.find((d) => d.log.length === 3);
    expect(first?.status).toBe('succeeded');
    expect(first?.log.map((a) => a.statusCode)).toEqual([500, 503, 200]);
    expect(first?.log[0]?.responseBody).toBe('answer 500');
  });

  test('a delivery that fails every attempt is given up and disables its subscription, saying why', async () => {
    const { webhook } = await subscribe();
    await updateContent(1, 'doomed');
    const w = worker('a');
    await w.tick();
    expect(received).toHaveLength(1);
    answers.push({ status: 500 });
    await app.db.webhookDelivery.updateMany({
      data: { attempts: MAX_ATTEMPTS - 1, nextAttemptAt: new Date(0) },
    });
    // The receiver answered 200 the first time: make the last attempt fail.
    await app.db.webhookDelivery.updateMany({ data: { status: 'pending' } });
    await drain(w);
    const subscription = await call('GET', `/api/v1/webhooks/${webhook.id}`);
    expect(subscription.json).toMatchObject({
      active: false,
      disabledReason: expect.stringContaining('HTTP 500'),
    });
    // Reactivating clears the reason; redeliver queues it again with the same webhook-id.
    expect(
      (await call('POST', `/api/v1/webhooks/${webhook.id}/actions/update`, { active: true })).json,
    ).toMatchObject({
      active: true,
      disabledReason: null,
    });
    const delivery = await app.db.webhookDelivery.findFirst({ where: { subscriptionId: webhook.id } });
    const again = await call(
      'POST',
      `/api/v1/webhooks/${webhook.id}/deliveries/${delivery?.id}/actions/redeliver`,
    );
    expect(again.status).toBe(202);
    expect(again.json).toMatchObject({ status: 'pending', attempts: 0 });
    await drain(w);
    expect(received.at(-1)?.headers['webhook-id']).toBe(received[0]?.headers['webhook-id']);
    expect(
      (await call('POST', `/api/v1/webhooks/${webhook.id}/deliveries/99999/actions/redeliver`)).status,
    ).toBe(404);
  });

  test('a name resolving to loopback is refused at connect time unless allowed', async () => {
    const port = (receiver.address() as AddressInfo).port;
    const created = await call('POST', '/api/v1/webhooks', {
      url: `http://localhost:${port}/hook`,
      eventTypes: ['*'],
    });
    expect(created.status).toBe(201);
    await updateContent(1, 'to localhost');
    await drain(worker('strict', []));
    expect(received).toHaveLength(0);
    const attempt = await app.db.webhookAttempt.findFirst();
    expect(attempt?.statusCode).toBeNull();
    expect(attempt?.error).toMatch(/private, loopback or link-local/);
  });

  test('test event and secret rotation: both secrets sign during the overlap', async () => {
    const { webhook, secret } = await subscribe();
    const rotated = await call('POST', `/api/v1/webhooks/${webhook.id}/actions/rotateSecret`, {
      overlapSeconds: 3600,
    });
    expect(rotated.status).toBe(200);
    const next = (rotated.json as { secret: string }).secret;
    expect(next).not.toBe(secret);
    const queued = await call('POST', `/api/v1/webhooks/${webhook.id}/actions/test`);
    expect(queued.status).toBe(202);
    expect(queued.json).toMatchObject({ eventType: 'webhook.test', status: 'pending' });
    await drain(worker('a'));
    expect(received).toHaveLength(1);
    const message = received[0] as Received;
    expect(String(message.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(next, message).type).toBe('webhook.test');
    expect(verified(secret, message).type).toBe('webhook.test');
  });

  test("a resource's later event is not sent while an earlier one is still to be dispatched", async () => {
    const { webhook } = await subscribe();
    await updateContent(1, 'first');
    await updateContent(1, 'second');
    const [earlier, later] = await app.db.event.findMany({
      where: { dispatched: false, resourceId: 1 },
      orderBy: { id: 'asc' },
    });
    if (earlier === undefined || later === undefined) throw new Error('two events were expected');
    // As when two nodes dispatch at once: the later event's batch committed while the earlier one's
    // (locked, so skipped by the other node) is still open.
    await app.db.event.update({ where: { id: later.id }, data: { dispatched: true } });
    const now = new Date();
    await app.db.webhookDelivery.create({
      data: {
        subscriptionId: webhook.id,
        eventId: later.id,
        orderKey: `${later.resourceType}:${later.resourceId}`,
        nextAttemptAt: now,
        createdAt: now,
      },
    });
    expect(await claimDeliveries(app.db, app.provider, 'a', 60_000)).toEqual([]);
    await drain(worker('a'));
    const titles = received.map((m) => (JSON.parse(m.body) as { data: { payload: { title: string } } }).data);
    expect(titles.map((data) => data.payload.title)).toEqual(['first', 'second']);
  });

  test('two workers on one queue send each event once, each resource in order', async () => {
    await subscribe();
    for (let i = 0; i < 12; i += 1) await updateContent(1 + (i % 2), `v${i}`);
    await drain(worker('a'), worker('b'));
    const ids = received.map((m) => m.headers['webhook-id']);
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
    for (const content of [1, 2]) {
      const titles = received
        .map((m) => JSON.parse(m.body) as { data: { resourceId: number; payload: { title: string } } })
        .filter((m) => m.data.resourceId === content)
        .map((m) => Number(m.data.payload.title.slice(1)));
      expect([...titles].sort((a, b) => a - b)).toEqual(titles);
    }
  });
});
