import type { Db } from '../../db/client.ts';
import type { WebhookAttempt, WebhookDelivery } from '../../db/models.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { formatDateTime } from '../dates.ts';
import { notFound } from '../errors.ts';
import type { Actor } from './actor.ts';
import { recordEvent } from './record.ts';

/* The delivery log of a subscription, and the two operations that queue a delivery by hand. */

export type DeliveryRecord = components['schemas']['WebhookDelivery'];
export type DeliveryPage = components['schemas']['WebhookDeliveryPage'];

function toDelivery(row: WebhookDelivery, eventType: string, attempts: WebhookAttempt[]): DeliveryRecord {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType,
    status: row.status as DeliveryRecord['status'],
    attempts: row.attempts,
    nextAttemptAt: formatDateTime(row.nextAttemptAt),
    createdAt: formatDateTime(row.createdAt),
    completedAt: row.completedAt === null ? null : formatDateTime(row.completedAt),
    log: attempts.map((attempt) => ({
      at: formatDateTime(attempt.at),
      statusCode: attempt.statusCode,
      durationMs: attempt.durationMs,
      responseBody: attempt.responseBody,
      error: attempt.error,
    })),
  };
}

async function requireSubscription(db: Db, id: number): Promise<void> {
  const row = await db.webhookSubscription.findUnique({ where: { id }, select: { id: true } });
  if (row === null) throw notFound(`Webhook ${id} does not exist`);
}

async function withDetails(db: Db, rows: WebhookDelivery[]): Promise<DeliveryRecord[]> {
  const ids = rows.map((row) => row.id);
  const [events, attempts] = await Promise.all([
    db.event.findMany({
      where: { id: { in: rows.map((row) => row.eventId) } },
      select: { id: true, type: true },
    }),
    db.webhookAttempt.findMany({ where: { deliveryId: { in: ids } }, orderBy: { id: 'asc' } }),
  ]);
  const typeOf = new Map(events.map((event) => [event.id, event.type]));
  return rows.map((row) =>
    toDelivery(
      row,
      typeOf.get(row.eventId) ?? '',
      attempts.filter((attempt) => attempt.deliveryId === row.id),
    ),
  );
}

export async function listDeliveries(
  db: Db,
  subscriptionId: number,
  query: { after?: number; limit?: number },
): Promise<DeliveryPage> {
  await requireSubscription(db, subscriptionId);
  const limit = query.limit ?? 20;
  const rows = await db.webhookDelivery.findMany({
    where: { subscriptionId, ...(query.after !== undefined && { id: { lt: query.after } }) },
    orderBy: { id: 'desc' },
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { deliveries: await withDetails(db, page), next: rows.length > limit && last ? last.id : null };
}

/**
 * A `webhook.test` event for this subscription alone: recorded already dispatched (so no other
 * subscription receives it), with its one delivery, in one transaction.
 */
export async function queueTestEvent(db: Db, subscriptionId: number, actor: Actor): Promise<DeliveryRecord> {
  await requireSubscription(db, subscriptionId);
  const delivery = await writeTransaction(db, async (tx) => {
    await recordEvent(tx, {
      actor,
      type: 'webhook.test',
      resourceId: subscriptionId,
      payload: { webhookId: subscriptionId },
    });
    const event = await tx.event.findFirst({
      where: { type: 'webhook.test', resourceId: subscriptionId },
      orderBy: { id: 'desc' },
    });
    if (event === null) throw new Error('the test event just recorded is missing');
    await tx.event.update({ where: { id: event.id }, data: { dispatched: true } });
    return tx.webhookDelivery.create({
      data: { subscriptionId, eventId: event.id, orderKey: `webhook:${subscriptionId}:${event.id}` },
    });
  });
  return (await withDetails(db, [delivery]))[0] as DeliveryRecord;
}

/** Queues a delivery again, now, with a fresh attempt budget; the attempts so far stay in the log. */
export async function redeliver(db: Db, subscriptionId: number, deliveryId: number): Promise<DeliveryRecord> {
  const { count } = await db.webhookDelivery.updateMany({
    where: { id: deliveryId, subscriptionId },
    data: {
      status: 'pending',
      attempts: 0,
      nextAttemptAt: new Date(),
      leaseUntil: null,
      leaseOwner: null,
      completedAt: null,
    },
  });
  if (count === 0) throw notFound(`Delivery ${deliveryId} of webhook ${subscriptionId} does not exist`);
  const row = await db.webhookDelivery.findUnique({ where: { id: deliveryId } });
  if (row === null) throw notFound(`Delivery ${deliveryId} of webhook ${subscriptionId} does not exist`);
  return (await withDetails(db, [row]))[0] as DeliveryRecord;
}
