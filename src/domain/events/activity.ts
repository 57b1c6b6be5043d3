import type { Db } from '../../db/client.ts';
import type { Event as EventRow, Prisma } from '../../db/models.ts';
import type { components } from '../../generated/openapi.ts';
import { formatDateTime, parseDateTime } from '../dates.ts';
import { assertNoProblems, type FieldProblem } from '../errors.ts';
import { readJsonObject } from '../jsonObject.ts';
import { isEventPattern } from './types.ts';

export type EventRecord = components['schemas']['Event'];
export type ActivityPage = components['schemas']['ActivityPage'];

export interface ActivityQuery {
  type?: string;
  resourceType?: string;
  resourceId?: number;
  actorType?: string;
  actorId?: number;
  since?: string;
  until?: string;
  after?: number;
  limit?: number;
}

export function toEventRecord(row: EventRow): EventRecord {
  return {
    id: row.id,
    type: row.type,
    resourceType: row.resourceType,
    resourceId: row.resourceId,
    siteId: row.siteId,
    channelId: row.channelId,
    actor: { type: row.actorType as EventRecord['actor']['type'], id: row.actorId },
    createdAt: formatDateTime(row.createdAt),
    payload: readJsonObject(row.payload),
  };
}

function typeFilter(type: string | undefined, problems: FieldProblem[]): Prisma.EventWhereInput {
  if (type === undefined) return {};
  if (!isEventPattern(type)) {
    problems.push({ field: 'type', message: `'${type}' is not an event type or a 'resource.*' wildcard` });
    return {};
  }
  if (type === '*') return {};
  return type.endsWith('.*') ? { type: { startsWith: type.slice(0, -1) } } : { type };
}

function dateOf(field: string, text: string | undefined, problems: FieldProblem[]): Date | undefined {
  if (text === undefined) return undefined;
  const date = parseDateTime(text);
  if (date === undefined) problems.push({ field, message: `'${text}' is not a valid date-time` });
  return date;
}

/**
 * A page of the activity log, newest first. The cursor is an event id (keyset paging): events
 * recorded after the first page was read have higher ids and never push older ones across pages.
 */
export async function listActivity(db: Db, query: ActivityQuery): Promise<ActivityPage> {
  const problems: FieldProblem[] = [];
  const since = dateOf('since', query.since, problems);
  const until = dateOf('until', query.until, problems);
  const where: Prisma.EventWhereInput = {
    ...typeFilter(query.type, problems),
    ...(query.resourceType !== undefined && { resourceType: query.resourceType }),
    ...(query.resourceId !== undefined && { resourceId: query.resourceId }),
    ...(query.actorType !== undefined && { actorType: query.actorType }),
    ...(query.actorId !== undefined && { actorId: query.actorId }),
    ...((since !== undefined || until !== undefined) && {
      createdAt: { ...(since && { gte: since }), ...(until && { lte: until }) },
    }),
    ...(query.after !== undefined && { id: { lt: query.after } }),
  };
  assertNoProblems(problems);
  const limit = query.limit ?? 50;
  const rows = await db.event.findMany({ where, orderBy: { id: 'desc' }, take: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { events: page.map(toEventRecord), next: rows.length > limit && last ? last.id : null };
}
