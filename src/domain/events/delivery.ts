import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import type { Db, DbProvider } from '../../db/client.ts';
import type { Event, WebhookSubscription } from '../../db/models.ts';
import { identifier, joinSql, sql } from '../../db/sql.ts';
import { type Tx, WRITE_TRANSACTION_MAX_WAIT_MS, writeTransaction } from '../../db/transaction.ts';
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
 *   resource, and none while an earlier event of the resource awaits dispatch (on another node's
 *   batch, say), so a resource's events arrive in order; a node that dies mid-send loses its lease and
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
 * Deliveries one worker claims and sends at once (a batch): all of a batch's sends run together, so
 * the batch lasts at most one send's timeout, and their outcomes are recorded in one transaction.
 */
export const DELIVERY_CONCURRENCY = 64;

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
  /** Deliveries claimed and sent at once (default DELIVERY_CONCURRENCY). */
  concurrency?: number;
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
 * and at most RESPONSE_READ_LIMIT bytes of the answer are read. With `agents`, a connection kept
 * open from an earlier send (its address checked when it connected) may carry it; if the receiver
 * had closed that connection meanwhile, the request is sent once more on a new one.
 */
export function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  policy: OutboundPolicy,
  timeoutMs: number,
  agents?: Agents,
): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    let req: ClientRequest | undefined;
    const finish = (result: Omit<DeliveryResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const timer = setTimeout(() => {
      finish({ statusCode: null, body: '', error: `no complete answer within ${timeoutMs} ms` });
      req?.destroy();
    }, timeoutMs);
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const refusal = policy.urlProblem(url);
    if (refusal) {
      finish({ statusCode: null, body: '', error: refusal });
      return;
    }
    const https = target.protocol === 'https:';
    const send = (mayRetry: boolean) => {
      let answered = false;
      const request = (https ? httpsRequest : httpRequest)(
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
          agent: agents === undefined ? false : https ? agents.https : agents.http,
          servername: host,
        },
        (response) => {
          answered = true;
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
      req = request;
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (settled) return;
        // A kept connection the receiver closed while it was idle: the request never reached it.
        const stale =
          request.reusedSocket && !answered && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
        if (stale && mayRetry) {
          send(false);
          return;
        }
        finish({
          statusCode: null,
          body: '',
          error:
            error.code === 'EREFUSEDADDRESS' ? error.message : `connection failed (${error.code ?? 'error'})`,
        });
      });
      request.end(body);
    };
    send(true);
  });
}

const at = (provider: DbProvider, date: Date) => (provider === 'sqlite' ? date.getTime() : date);

function matches(subscription: WebhookSubscription, event: Event): boolean {
  if (subscription.siteId !== null && subscription.siteId !== event.siteId) return false;
  if (subscription.channelId !== null && subscription.channelId !== event.channelId) return false;
  return subscription.eventTypes.split(',').some((pattern) => typeMatches(pattern, event.type));
}

/** Rows per INSERT: well within either database's limit on a statement's parameters. */
const INSERT_CHUNK = 500;

/**
 * Inserts rows with one multi-row statement per chunk. Prisma's createMany costs a large multiple
 * of this per row (bench/EVENTS.md), and a batch inserts a row per delivery or per attempt. Dates
 * must come through `at`, as in every raw statement.
 */
async function insertRows(
  tx: Tx,
  table: 'WebhookDelivery' | 'WebhookAttempt',
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
): Promise<void> {
  const names = joinSql(columns.map((column) => identifier(column)));
  for (let from = 0; from < rows.length; from += INSERT_CHUNK) {
    const values = rows.slice(from, from + INSERT_CHUNK).map((row) => sql`(${joinSql(row)})`);
    await tx.$executeRaw(sql`INSERT INTO ${identifier(table)} (${names}) VALUES ${joinSql(values)}`);
  }
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
    const now = at(provider, new Date());
    const deliveries = events.flatMap((event) =>
      subscriptions
        .filter((subscription) => matches(subscription, event))
        .map((subscription) => [
          subscription.id,
          event.id,
          `${event.resourceType}:${event.resourceId}`,
          now,
          now,
        ]),
    );
    await insertRows(
      tx,
      'WebhookDelivery',
      ['subscriptionId', 'eventId', 'orderKey', 'nextAttemptAt', 'createdAt'],
      deliveries,
    );
    return claimed.length;
  });
}

interface Claimed {
  id: number;
  subscriptionId: number;
  eventId: number;
  attempts: number;
}

/**
 * Leases due deliveries: of each subscription and resource, only the earliest pending one, and none
 * while an earlier event of the resource is still to be dispatched.
 */
export async function claimDeliveries(
  db: Db,
  provider: DbProvider,
  owner: string,
  leaseMs: number,
  limit = DELIVERY_CONCURRENCY,
  now = new Date(),
): Promise<Claimed[]> {
  const skipLocked = provider === 'postgresql' ? sql`FOR UPDATE OF d SKIP LOCKED` : sql``;
  // On SQLite the claim is a transaction of its own: the adapter runs a statement sent outside a
  // transaction on its one connection, inside whatever transaction is open there (an API write's),
  // and that transaction's rollback would take the claim with it after the batch was sent.
  const run = (on: Db | Tx) =>
    on.$queryRaw<Claimed[]>(sql`
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
        -- Nor while an earlier event of the resource has no deliveries yet: another node may be
        -- dispatching it right now (its batch locked, so this node's dispatch took the later one).
        AND NOT EXISTS (
          SELECT 1 FROM "Event" v
          WHERE v."dispatched" = false AND v."id" < d."eventId"
            AND v."resourceType" || ':' || v."resourceId" = d."orderKey")
      ORDER BY d."nextAttemptAt", d."id" LIMIT ${limit} ${skipLocked}
    )
    -- Checked again on the row as it is when updated: on PostgreSQL, a row another node claimed
    -- (and committed) after this statement's snapshot was taken is then seen leased, and skipped.
      AND "status" = 'pending' AND ("leaseUntil" IS NULL OR "leaseUntil" < ${at(provider, now)})
    RETURNING "id", "subscriptionId", "eventId", "attempts"`);
  const rows = provider === 'sqlite' ? await writeTransaction(db, run) : await run(db);
  return rows.map((row) => ({
    id: Number(row.id),
    subscriptionId: Number(row.subscriptionId),
    eventId: Number(row.eventId),
    attempts: Number(row.attempts),
  }));
}

/** A claimed delivery sent, with the receiver's answer. */
interface Sent {
  claimed: Claimed;
  subscription: WebhookSubscription;
  at: Date;
  finished: Date;
  result: DeliveryResult;
}

/** What became of one claimed delivery: sent, or nothing left to send (event or subscription gone). */
type Outcome = Sent | { claimed: Claimed; gone: true };

const wasSent = (outcome: Outcome): outcome is Sent => !('gone' in outcome);

/**
 * Time kept on a lease after a send's exchange for recording its outcome: a write transaction waits
 * that long at most for its turn. A send that could not end this long before its lease does is not
 * started: the lease could run out during it and another node send the delivery too.
 */
const RECORD_MARGIN_MS = WRITE_TRANSACTION_MAX_WAIT_MS;

/** Extra time a lease has beyond a send's timeout and the record's margin, for the batch's reads. */
const LEASE_SLACK_MS = 10_000;

/** How long a claim leases its deliveries: the reads, one send's whole exchange, and the record. */
export function leaseMsOf(timeoutMs: number): number {
  return LEASE_SLACK_MS + timeoutMs + RECORD_MARGIN_MS;
}

/** The connections a worker keeps open to its receivers, reused from one batch to the next. */
export interface Agents {
  http: HttpAgent;
  https: HttpsAgent;
}

export function keepAliveAgents(concurrency = DELIVERY_CONCURRENCY): Agents {
  // Idle connections close after a few seconds (before the 5 s most servers keep them), and the
  // connections to one receiver never outnumber the sends of a batch.
  const options = { keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency, timeout: 4000 };
  return { http: new HttpAgent(options), https: new HttpsAgent(options) };
}

/**
 * Sends a claimed batch at once and records every outcome in one transaction. The batch's events
 * and subscriptions are read with one query each; every send starts with the lease's remaining
 * time checked, and every record is fenced by the lease owner.
 */
export async function sendBatch(
  options: WorkerOptions,
  claimed: readonly Claimed[],
  leaseUntil: number,
  agents?: Agents,
): Promise<void> {
  if (claimed.length === 0) return;
  const { db, owner } = options;
  const [events, subscriptions] = await Promise.all([
    db.event.findMany({ where: { id: { in: [...new Set(claimed.map((c) => c.eventId))] } } }),
    db.webhookSubscription.findMany({
      where: { id: { in: [...new Set(claimed.map((c) => c.subscriptionId))] } },
    }),
  ]);
  if (Date.now() + options.timeoutMs + RECORD_MARGIN_MS > leaseUntil) {
    // The reads took so long that a send could outlast the lease: hand the batch back unsent.
    await releaseLeases(db, owner, claimed);
    return;
  }
  const eventOf = new Map(events.map((event) => [event.id, event]));
  const subscriptionOf = new Map(subscriptions.map((subscription) => [subscription.id, subscription]));
  const outcomes = await Promise.all(
    claimed.map(async (delivery): Promise<Outcome> => {
      const event = eventOf.get(delivery.eventId);
      const subscription = subscriptionOf.get(delivery.subscriptionId);
      // Trimmed or deleted meanwhile: nothing left to send.
      if (event === undefined || subscription === undefined) return { claimed: delivery, gone: true };
      const at = new Date();
      const message = messageOf(event, at);
      const headers = signatureHeaders(message, secretsOf(subscription, at));
      const result = await post(
        subscription.url,
        headers,
        message.body,
        options.policy,
        options.timeoutMs,
        agents,
      );
      const ok = isSuccess(result);
      options.hooks?.attempted?.(ok ? 'succeeded' : 'failed', result.durationMs);
      return { claimed: delivery, subscription, at, finished: new Date(), result };
    }),
  );
  // Waits for its turn as long as any write: an outcome not recorded before the lease ends (the
  // pool busy with API writes) would have another node send the delivery again.
  await writeTransaction(db, (tx) => recordOutcomes(tx, options.provider, owner, outcomes));
}

const isSuccess = (result: DeliveryResult) =>
  result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;

/** Gives leases back without an attempt: the claim's count of it is taken back too. */
async function releaseLeases(db: Db, owner: string, claimed: readonly Claimed[]): Promise<void> {
  await writeTransaction(db, (tx) =>
    tx.webhookDelivery.updateMany({
      where: { id: { in: claimed.map((c) => c.id) }, leaseOwner: owner, status: 'pending' },
      data: { leaseUntil: null, attempts: { decrement: 1 } },
    }),
  );
}

/**
 * The batch's outcomes, in one transaction: each delivery's state where this node still holds its
 * lease (a delivery another node claimed since is left to it, and its attempt is not logged here),
 * the attempts of those, and each subscription's failure count once.
 */
async function recordOutcomes(
  tx: Tx,
  provider: DbProvider,
  owner: string,
  outcomes: readonly Outcome[],
): Promise<void> {
  const now = new Date();
  const gone = outcomes.filter((outcome) => !wasSent(outcome)).map((outcome) => outcome.claimed.id);
  if (gone.length > 0)
    await tx.webhookDelivery.updateMany({
      where: { id: { in: gone }, leaseOwner: owner },
      data: { status: 'failed', completedAt: now, leaseUntil: null },
    });
  const sent = outcomes.filter(wasSent);
  const succeeded = sent.filter((outcome) => isSuccess(outcome.result));
  const recorded = new Set<number>();
  if (succeeded.length > 0) {
    const ids = joinSql(succeeded.map((outcome) => outcome.claimed.id));
    const rows = await tx.$queryRaw<{ id: number }[]>(sql`
      UPDATE "WebhookDelivery" SET "status" = 'succeeded', "completedAt" = ${at(provider, now)}, "leaseUntil" = NULL
      WHERE "id" IN (${ids}) AND "leaseOwner" = ${owner}
      RETURNING "id"`);
    for (const row of rows) recorded.add(Number(row.id));
  }
  for (const { claimed, finished, result } of sent) {
    if (isSuccess(result)) continue;
    const givenUp = claimed.attempts >= MAX_ATTEMPTS;
    const { count } = await tx.webhookDelivery.updateMany({
      where: { id: claimed.id, leaseOwner: owner },
      data: givenUp
        ? { status: 'failed', completedAt: finished, leaseUntil: null }
        : {
            nextAttemptAt: new Date(
              finished.getTime() + retryDelayMs(claimed.attempts, result.retryAfterSeconds),
            ),
            leaseUntil: null,
          },
    });
    if (count > 0) recorded.add(claimed.id);
  }
  const kept = sent.filter((outcome) => recorded.has(outcome.claimed.id));
  if (kept.length === 0) return;
  await insertRows(
    tx,
    'WebhookAttempt',
    ['deliveryId', 'subscriptionId', 'at', 'statusCode', 'durationMs', 'responseBody', 'error'],
    kept.map(({ claimed, subscription, at: sentAt, result }) => [
      claimed.id,
      subscription.id,
      at(provider, sentAt),
      result.statusCode,
      result.durationMs,
      result.body,
      result.error,
    ]),
  );
  // Each subscription's counter, from its outcomes in the order they ended: a success resets it,
  // each failure after the last success adds one.
  const bySubscription = new Map<number, Sent[]>();
  for (const outcome of [...kept].sort((a, b) => a.finished.getTime() - b.finished.getTime()))
    bySubscription.set(outcome.subscription.id, [
      ...(bySubscription.get(outcome.subscription.id) ?? []),
      outcome,
    ]);
  for (const [subscriptionId, list] of bySubscription) {
    const lastSuccess = list.findLastIndex((outcome) => isSuccess(outcome.result));
    const failuresAfter = list.length - 1 - lastSuccess;
    const givenUp = list.find(
      (outcome) => !isSuccess(outcome.result) && outcome.claimed.attempts >= MAX_ATTEMPTS,
    );
    const failures =
      lastSuccess >= 0
        ? { consecutiveFailures: failuresAfter }
        : { consecutiveFailures: { increment: failuresAfter } };
    if (givenUp !== undefined) {
      const { claimed, finished, result } = givenUp;
      await tx.webhookSubscription.updateMany({
        where: { id: subscriptionId },
        data: {
          ...NEXT_VERSION,
          ...failures,
          active: false,
          disabledReason: `disabled at ${finished.toISOString()}: delivery ${claimed.id} failed ${MAX_ATTEMPTS} attempts over about a day (last: ${result.statusCode === null ? result.error : `HTTP ${result.statusCode}`})`,
        },
      });
    } else if (failuresAfter > 0) {
      await tx.webhookSubscription.updateMany({
        where: { id: subscriptionId },
        data: { ...failures, ...NEXT_VERSION },
      });
    } else {
      // Each change advances the subscription's version (its ETag); successes on a subscription
      // without failures change nothing, so they write nothing.
      await tx.webhookSubscription.updateMany({
        where: { id: subscriptionId, consecutiveFailures: { not: 0 } },
        data: { consecutiveFailures: 0, ...NEXT_VERSION },
      });
    }
  }
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
 * The loop each serving process runs: dispatch, claim, send (a batch at a time, concurrently) and
 * record, again at once while there is work, else after `idleMs`. `stop` waits for the batch in
 * flight, then closes the connections kept to receivers.
 */
export class DeliveryWorker {
  #stopped = false;
  #running: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #lastTrim = 0;
  readonly #agents: Agents;

  constructor(private readonly options: WorkerOptions) {
    this.#agents = keepAliveAgents(options.concurrency ?? DELIVERY_CONCURRENCY);
  }

  start(): void {
    this.#running = this.#loop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }

  async tick(): Promise<number> {
    const { db, provider, owner, timeoutMs } = this.options;
    if (Date.now() - this.#lastTrim > 60_000) {
      this.#lastTrim = Date.now();
      await trimEvents(db, this.options.retentionDays);
    }
    const dispatched = await dispatchEvents(db, provider);
    const now = new Date();
    const leaseMs = leaseMsOf(timeoutMs);
    const claimed = await claimDeliveries(
      db,
      provider,
      owner,
      leaseMs,
      this.options.concurrency ?? DELIVERY_CONCURRENCY,
      now,
    );
    await sendBatch(this.options, claimed, now.getTime() + leaseMs, this.#agents);
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
