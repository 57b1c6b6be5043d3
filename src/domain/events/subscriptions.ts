import type { Db } from '../../db/client.ts';
import type { WebhookSubscription } from '../../db/models.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { formatDateTime } from '../dates.ts';
import { assertNoProblems, type FieldProblem, notFound } from '../errors.ts';
import {
  NEXT_VERSION,
  type Precondition,
  refuseUnlessMissing,
  type Versioned,
  versionFilter,
} from '../versions.ts';
import type { OutboundPolicy } from './outbound.ts';
import { newWebhookSecret } from './secrets.ts';
import { isEventPattern } from './types.ts';

/*
 * Webhook subscriptions (docs/api/events.md): where to send which events. The signing secret is
 * answered once, at creation and at each rotation; a rotation keeps the previous secret signing
 * too (a second `v1,` signature) for the overlap asked, so receivers can switch without a gap.
 */

export type WebhookRecord = components['schemas']['Webhook'];
export type IssuedWebhook = components['schemas']['IssuedWebhook'];
type CreateRequest = components['schemas']['CreateWebhookRequest'];
type UpdateRequest = components['schemas']['UpdateWebhookRequest'];

const dateOrNull = (date: Date | null) => (date === null ? null : formatDateTime(date));

export function toWebhook(row: WebhookSubscription): WebhookRecord {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes.split(',').filter((type) => type !== ''),
    siteId: row.siteId,
    channelId: row.channelId,
    active: row.active,
    description: row.description,
    disabledReason: row.disabledReason,
    createdAt: formatDateTime(row.createdAt),
    updatedAt: formatDateTime(row.updatedAt),
    previousSecretUntil: dateOrNull(row.previousSecretUntil),
  };
}

function checked(
  request: Partial<CreateRequest>,
  policy: OutboundPolicy,
  siteAndChannel: { siteId: number | null; channelId: number | null },
): { url?: string; eventTypes?: string } {
  const problems: FieldProblem[] = [];
  if (request.url !== undefined) {
    const problem = policy.urlProblem(request.url);
    if (problem) problems.push({ field: 'url', message: problem });
  }
  if (request.eventTypes !== undefined) {
    for (const type of request.eventTypes)
      if (!isEventPattern(type) || type === 'webhook.test')
        problems.push({
          field: 'eventTypes',
          message: `'${type}' is not an event type or a 'resource.*' wildcard`,
        });
  }
  // A channel filter needs its site: the request's own, or (an update) the subscription's.
  if (siteAndChannel.channelId !== null && siteAndChannel.siteId === null)
    problems.push({ field: 'channelId', message: 'needs siteId' });
  assertNoProblems(problems);
  return {
    ...(request.url !== undefined && { url: request.url }),
    ...(request.eventTypes !== undefined && { eventTypes: [...new Set(request.eventTypes)].join(',') }),
  };
}

async function existing(db: Db, id: number): Promise<WebhookSubscription> {
  const row = await db.webhookSubscription.findUnique({ where: { id } });
  if (row === null) throw notFound(`Webhook ${id} does not exist`);
  return row;
}

export async function listWebhooks(db: Db): Promise<WebhookRecord[]> {
  return (await db.webhookSubscription.findMany({ orderBy: { id: 'asc' } })).map(toWebhook);
}

export async function getWebhook(db: Db, id: number): Promise<Versioned<WebhookRecord>> {
  const row = await existing(db, id);
  return { record: toWebhook(row), version: row.version };
}

export async function createWebhook(
  db: Db,
  request: CreateRequest,
  policy: OutboundPolicy,
): Promise<IssuedWebhook> {
  const siteId = request.siteId ?? null;
  const channelId = request.channelId ?? null;
  const { url = request.url, eventTypes = '' } = checked(request, policy, { siteId, channelId });
  const secret = newWebhookSecret();
  const row = await db.webhookSubscription.create({
    data: {
      url,
      eventTypes,
      siteId,
      channelId,
      active: request.active ?? true,
      description: request.description ?? '',
      secret,
    },
  });
  return { secret, webhook: toWebhook(row) };
}

/** Reactivating a subscription clears why it was disabled and its failure count. */
export async function updateWebhook(
  db: Db,
  id: number,
  request: UpdateRequest,
  policy: OutboundPolicy,
  precondition?: Precondition,
): Promise<Versioned<WebhookRecord>> {
  const current = await existing(db, id);
  const siteId = request.siteId === undefined ? current.siteId : request.siteId;
  const channelId = request.channelId === undefined ? current.channelId : request.channelId;
  const values = checked(request, policy, { siteId, channelId });
  const row = await writeTransaction(db, async (tx) => {
    const { count } = await tx.webhookSubscription.updateMany({
      where: { id, ...versionFilter(precondition) },
      data: {
        ...values,
        siteId,
        channelId,
        ...(request.description !== undefined && { description: request.description }),
        ...(request.active !== undefined && { active: request.active }),
        ...(request.active === true && { disabledReason: null, consecutiveFailures: 0 }),
        updatedAt: new Date(),
        ...NEXT_VERSION,
      },
    });
    if (count === 0) return refuseUnlessMissing(`Webhook ${id}`, precondition, () => versionOf(tx, id));
    return tx.webhookSubscription.findUnique({ where: { id } });
  });
  if (row === null) throw notFound(`Webhook ${id} does not exist`);
  return { record: toWebhook(row), version: row.version };
}

function versionOf(tx: Pick<Db, 'webhookSubscription'>, id: number) {
  return tx.webhookSubscription.findUnique({ where: { id }, select: { version: true } });
}

export async function deleteWebhook(db: Db, id: number, precondition?: Precondition): Promise<WebhookRecord> {
  const current = await existing(db, id);
  // The subscription's row first, at the version named: its deliveries go only with it.
  const deleted = await writeTransaction(db, async (tx) => {
    const { count } = await tx.webhookSubscription.deleteMany({
      where: { id, ...versionFilter(precondition) },
    });
    if (count === 0) return refuseUnlessMissing(`Webhook ${id}`, precondition, () => versionOf(tx, id));
    await tx.webhookAttempt.deleteMany({ where: { subscriptionId: id } });
    await tx.webhookDelivery.deleteMany({ where: { subscriptionId: id } });
    return current;
  });
  if (deleted === null) throw notFound(`Webhook ${id} does not exist`);
  return toWebhook(deleted);
}

/** A new secret; the current one keeps signing (as a second signature) for `overlapSeconds`. */
export async function rotateWebhookSecret(
  db: Db,
  id: number,
  overlapSeconds: number,
  now = new Date(),
): Promise<IssuedWebhook> {
  const current = await existing(db, id);
  const secret = newWebhookSecret();
  const row = await db.webhookSubscription.update({
    where: { id },
    data: {
      secret,
      previousSecret: overlapSeconds > 0 ? current.secret : null,
      previousSecretUntil: overlapSeconds > 0 ? new Date(now.getTime() + overlapSeconds * 1000) : null,
      updatedAt: now,
      ...NEXT_VERSION,
    },
  });
  return { secret, webhook: toWebhook(row) };
}
