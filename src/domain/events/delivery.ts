import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import type { Db, DbProvider } from '../../db/client.ts';
import type { Event, WebhookSubscription } from '../../db/models.ts';
import { sql } from '../../db/sql.ts';
import { writeTransaction } from '../../db/transaction.ts';
import { NEXT_VERSION } from '../versions.ts';
import { toEventRecord } from './activity.ts';
import type { OutboundPolicy } from './outbound.ts';
import { typeMatches } from './types.ts';

/*
 * Delivery of events to webhook subscriptions (docs/api/events.md, "Delivery"). Every serving
 * process runs one worker; they share the work through the database alone:
 * - dispatch turns undispatched events into deliveries, claiming the events with one UPDATE
 *   (SKIP LOCKED on PostgreSQL; SQLite has one writer) in the transaction that inserts them;
 * - claim leases due deliveries the same way, only the earliest pending one of each subscription and
 *   resource, so a resource's events arrive in order; a node that dies mid-send loses its lease and
 *   another sends again (at least once; the same `webhook-id` lets receivers drop the duplicate).
 */

/** Seconds to wait after failed attempt n (1-based); the last entry's attempt is the last one. About a day in all. */
export const RETRY_SCHEDULE_SECONDS = [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800] as const;
/** Attempts of one delivery before it is given up; giving one up also disables its subscription. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length + 1;
/** Bytes of a receiver's answer read at most (the rest is not read) and kept in the delivery log. */
export const RESPONSE_READ_LIMIT = 64 * 1024;
export const RESPONSE_KEPT_CHARS = 1024;
/**
 * Deliveries one worker sends at once: each ends in a short transaction, and the database's
 * connection pool is shared with the API's writes, which must not wait behind the worker.
 */
const BATCH = 8;

export interface DeliveryResult {
  statusCode: number | null;
  durationMs: number;
  body: string;
  error: string | null;
  /** Seconds the receiver asked to wait (Retry-After), when it did. */
  retryAfterSeconds?: number;
}

export interface DeliveryHooks {
  /** Called after each attempt with its outcome. */
  attempted?: (outcome: 'succeeded' | 'failed', durationMs: number) => void;
}

export interface WorkerOptions {
  db: Db;
  provider: DbProvider;
  policy: OutboundPolicy;
  timeoutMs: number;
  /** This process's name in leases. */
  owner: string;
  retentionDays: number;
  hooks?: DeliveryHooks;
  /** Pause between polls when there was nothing to do. */
  idleMs?: number;
  onError?: (error: unknown) => void;
}

/** The delay before the next attempt: the schedule with ±20 % jitter, or Retry-After if longer. */
export function retryDelayMs(attempts: number, retryAfterSeconds?: number, random = Math.random): number {
  const base = RETRY_SCHEDULE_SECONDS[Math.min(attempts, RETRY_SCHEDULE_SECONDS.length) - 1] ?? 5;
  const jittered = base * 1000 * (0.8 + 0.4 * random());
  const asked = Math.min(retryAfterSeconds ?? 0, 86_400) * 1000;
  return Math.round(Math.max(jittered, asked));
}

function retryAfterOf(response: IncomingMessage, now: number): number | undefined {
  const header = response.headers['retry-after'];
  if (header === undefined) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

export interface SignedMessage {
  id: string;
  timestamp: Date;
  body: string;
}

/** The Standard Webhooks headers: one `v1,` signature per secret that still signs. */
export function signatureHeaders(message: SignedMessage, secrets: readonly string[]): Record<string, string> {
  const signatures = secrets.map((secret) =>
    new Webhook(secret).sign(message.id, message.timestamp, message.body),
  );
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(Math.floor(message.timestamp.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

export function secretsOf(subscription: WebhookSubscription, now: Date): string[] {
  const previous =
    subscription.previousSecret !== null &&
    subscription.previousSecretUntil !== null &&
    subscription.previousSecretUntil.getTime() > now.getTime()
      ? [subscription.previousSecret]
      : [];
  return [subscription.secret, ...previous];
}

/** The body receivers get: Standard Webhooks' `type`, `timestamp`, `data`. */
export function messageOf(event: Event, now: Date): SignedMessage {
  const { type, ...data } = toEventRecord(event);
  return {
    id: `evt_${event.id}`,
    timestamp: now,
    body: JSON.stringify({ type, timestamp: now.toISOString(), data }),
  };
}

/**
 * One POST to a receiver: the connection's lookup refuses internal addresses (OutboundPolicy), the
 * whole exchange is bounded by `timeoutMs`, a redirect is an answer like any other (not followed),
 * and at most RESPONSE_READ_LIMIT bytes of the answer are read.
 */
export function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  policy: OutboundPolicy,
  timeoutMs: number,
): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<DeliveryResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const refusal = policy.urlProblem(url);
    if (refusal) {
      finish({ statusCode: null, body: '', error: refusal });
      return;
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'cms-webhooks',
        },
        lookup: policy.lookup,
        agent: false,
        servername: host,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () =>
          finish({
            statusCode: response.statusCode ?? null,
            body: Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_KEPT_CHARS),
            error: null,
            ...(retryAfterOf(response, Date.now()) !== undefined && {
              retryAfterSeconds: retryAfterOf(response, Date.now()),
            }),
          });
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= RESPONSE_READ_LIMIT) chunks.push(chunk);
          else {
            done();
            response.destroy();
          }
        });
        response.on('end', done);
        response.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      finish({ statusCode: null, body: '', error: `no complete answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      finish({
        statusCode: null,
        body: '',
        error:
          error.code === 'EREFUSEDADDRESS' ? error.message : `connection failed (${error.code ?? 'error'})`,
      });
    });
    req.end(body);
  });
}

const at = (provider: DbProvider, date: Date) => (provider === 'sqlite' ? date.getTime() : date);

function matches(subscription: WebhookSubscription, event: Event): boolean {
  if (subscription.siteId !== null && subscription.siteId !== event.siteId) return false;
  if (subscription.channelId !== null && subscription.channelId !== event.channelId) return false;
  return subscription.eventTypes.split(',').some((pattern) => typeMatches(pattern, event.type));
}

/** Turns undispatched events into deliveries; returns how many events it took. */
export async function dispatchEvents(db: Db, provider: DbProvider, limit = 200): Promise<number> {
  const skipLocked = provider === 'postgresql' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  return writeTransaction(db, async (tx) => {
    const claimed = await tx.$queryRaw<{ id: number }[]>(sql`
      UPDATE "Event" SET "dispatched" = true WHERE "id" IN (
        SELECT "id" FROM "Event" WHERE "dispatched" = false ORDER BY "id" LIMIT ${limit} ${skipLocked}
      ) RETURNING "id"`);
    if (claimed.length === 0) return 0;
    const events = await tx.event.findMany({
      where: { id: { in: claimed.map((row) => Number(row.id)) } },
      orderBy: { id: 'asc' },
    });
    const subscriptions = await tx.webhookSubscription.findMany({ where: { active: true } });
    const deliveries = events.flatMap((event) =>
      subscriptions
        .filter((subscription) => matches(subscription, event))
        .map((subscription) => ({
          subscriptionId: subscription.id,
          eventId: event.id,
          orderKey: `${event.resourceType}:${event.resourceId}`,
          nextAttemptAt: new Date(),
        })),
    );
    if (deliveries.length > 0) await tx.webhookDelivery.createMany({ data: deliveries });
    return claimed.length;
  });
}

interface Claimed {
  id: number;
  subscriptionId: number;
  eventId: number;
  attempts: number;
}

/** Leases due deliveries: of each subscription and resource, only the earliest pending one. */
export async function claimDeliveries(
  db: Db,
  provider: DbProvider,
  owner: string,
  leaseMs: number,
  limit = BATCH,
  now = new Date(),
): Promise<Claimed[]> {
  const skipLocked = provider === 'postgresql' ? sql`FOR UPDATE OF d SKIP LOCKED` : sql``;
  const rows = await db.$queryRaw<Claimed[]>(sql`
    UPDATE "WebhookDelivery" SET "leaseUntil" = ${at(provider, new Date(now.getTime() + leaseMs))},
      "leaseOwner" = ${owner}, "attempts" = "attempts" + 1
    WHERE "id" IN (
      SELECT d."id" FROM "WebhookDelivery" d
      JOIN "WebhookSubscription" s ON s."id" = d."subscriptionId" AND s."active" = true
      WHERE d."status" = 'pending' AND d."nextAttemptAt" <= ${at(provider, now)}
        AND (d."leaseUntil" IS NULL OR d."leaseUntil" < ${at(provider, now)})
        AND NOT EXISTS (
          SELECT 1 FROM "WebhookDelivery" e
          WHERE e."subscriptionId" = d."subscriptionId" AND e."orderKey" = d."orderKey"
            AND e."status" = 'pending' AND e."eventId" < d."eventId")
      ORDER BY d."nextAttemptAt", d."id" LIMIT ${limit} ${skipLocked}
    )
    -- Checked again on the row as it is when updated: on PostgreSQL, a row another node claimed
    -- (and committed) after this statement's snapshot was taken is then seen leased, and skipped.
      AND "status" = 'pending' AND ("leaseUntil" IS NULL OR "leaseUntil" < ${at(provider, now)})
    RETURNING "id", "subscriptionId", "eventId", "attempts"`);
  return rows.map((row) => ({
    id: Number(row.id),
    subscriptionId: Number(row.subscriptionId),
    eventId: Number(row.eventId),
    attempts: Number(row.attempts),
  }));
}

/** Sends one claimed delivery and records the attempt; the lease owner fences every write. */
export async function sendDelivery(options: WorkerOptions, claimed: Claimed): Promise<void> {
  const { db, owner } = options;
  const [event, subscription] = await Promise.all([
    db.event.findUnique({ where: { id: claimed.eventId } }),
    db.webhookSubscription.findUnique({ where: { id: claimed.subscriptionId } }),
  ]);
  const now = new Date();
  if (event === null || subscription === null) {
    // Trimmed or deleted meanwhile: nothing left to send.
    await db.webhookDelivery.updateMany({
      where: { id: claimed.id, leaseOwner: owner },
      data: { status: 'failed', completedAt: now, leaseUntil: null },
    });
    return;
  }
  const message = messageOf(event, now);
  const headers = signatureHeaders(message, secretsOf(subscription, now));
  const result = await post(subscription.url, headers, message.body, options.policy, options.timeoutMs);
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  options.hooks?.attempted?.(ok ? 'succeeded' : 'failed', result.durationMs);
  const givenUp = !ok && claimed.attempts >= MAX_ATTEMPTS;
  const finished = new Date();
  // Waits for its turn as long as any write: an outcome not recorded before the lease ends (the
  // pool busy with API writes) would have another node send the delivery again.
  await writeTransaction(db, async (tx) => {
    const { count } = await tx.webhookDelivery.updateMany({
      where: { id: claimed.id, leaseOwner: owner },
      data: ok
        ? { status: 'succeeded', completedAt: finished, leaseUntil: null }
        : givenUp
          ? { status: 'failed', completedAt: finished, leaseUntil: null }
          : {
              nextAttemptAt: new Date(
                finished.getTime() + retryDelayMs(claimed.attempts, result.retryAfterSeconds),
              ),
              leaseUntil: null,
            },
    });
    if (count === 0) return;
    await tx.webhookAttempt.create({
      data: {
        deliveryId: claimed.id,
        subscriptionId: subscription.id,
        at: now,
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        responseBody: result.body,
        error: result.error,
      },
    });
    // Each change advances the subscription's version (its ETag); a success on a subscription
    // without failures changes nothing, so it writes nothing.
    await tx.webhookSubscription.updateMany({
      where: { id: subscription.id, ...(ok && { consecutiveFailures: { not: 0 } }) },
      data: ok
        ? { consecutiveFailures: 0, ...NEXT_VERSION }
        : givenUp
          ? {
              ...NEXT_VERSION,
              consecutiveFailures: { increment: 1 },
              active: false,
              disabledReason: `disabled at ${finished.toISOString()}: delivery ${claimed.id} failed ${MAX_ATTEMPTS} attempts over about a day (last: ${result.statusCode === null ? result.error : `HTTP ${result.statusCode}`})`,
            }
          : { consecutiveFailures: { increment: 1 }, ...NEXT_VERSION },
    });
  });
}

/** Deletes events older than the retention, a few hundred at a time so that no lock is held long. */
export async function trimEvents(
  db: Db,
  retentionDays: number,
  now = new Date(),
  batch = 500,
): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  let removed = 0;
  for (;;) {
    const old = await db.event.findMany({
      where: { createdAt: { lt: cutoff } },
      select: { id: true },
      orderBy: { id: 'asc' },
      take: batch,
    });
    if (old.length === 0) return removed;
    const ids = old.map((row) => row.id);
    const deliveries = await db.webhookDelivery.findMany({
      where: { eventId: { in: ids } },
      select: { id: true },
    });
    await db.$transaction([
      db.webhookAttempt.deleteMany({ where: { deliveryId: { in: deliveries.map((d) => d.id) } } }),
      db.webhookDelivery.deleteMany({ where: { eventId: { in: ids } } }),
      db.event.deleteMany({ where: { id: { in: ids } } }),
    ]);
    removed += ids.length;
    if (old.length < batch) return removed;
  }
}

/**
 * The loop each serving process runs: dispatch, claim, send (a batch at a time, concurrently),
 * again at once while there is work, else after `idleMs`. `stop` waits for the batch in flight.
 */
export class DeliveryWorker {
  #stopped = false;
  #running: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #lastTrim = 0;

  constructor(private readonly options: WorkerOptions) {}

  start(): void {
    this.#running = this.#loop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
  }

  async tick(): Promise<number> {
    const { db, provider, owner, timeoutMs } = this.options;
    if (Date.now() - this.#lastTrim > 60_000) {
      this.#lastTrim = Date.now();
      await trimEvents(db, this.options.retentionDays);
    }
    const dispatched = await dispatchEvents(db, provider);
    const claimed = await claimDeliveries(db, provider, owner, timeoutMs + 30_000);
    await Promise.all(claimed.map((delivery) => sendDelivery(this.options, delivery)));
    return dispatched + claimed.length;
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      let worked = 0;
      try {
        worked = await this.tick();
      } catch (error) {
        this.options.onError?.(error);
      }
      if (worked === 0 && !this.#stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.idleMs ?? 500);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  }
}

/** The queue's depth and the wait of its oldest due delivery, for the metrics. */
export async function queueState(
  db: Db,
  now = new Date(),
): Promise<{ depth: number; oldestDueSeconds: number }> {
  const [depth, oldest] = await Promise.all([
    db.webhookDelivery.count({ where: { status: 'pending' } }),
    db.webhookDelivery.findFirst({
      where: { status: 'pending', nextAttemptAt: { lte: now } },
      orderBy: { nextAttemptAt: 'asc' },
      select: { nextAttemptAt: true },
    }),
  ]);
  const waited = oldest === null ? 0 : (now.getTime() - oldest.nextAttemptAt.getTime()) / 1000;
  return { depth, oldestDueSeconds: Math.max(0, waited) };
}
