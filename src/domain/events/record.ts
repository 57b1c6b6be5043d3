import type { Db } from '../../db/client.ts';
import type { Prisma } from '../../db/models.ts';
import type { SyncWrite } from '../../db/pointWrites.ts';
import { joinSql, sql } from '../../db/sql.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { Actor } from './actor.ts';
import { type EventType, resourceTypeOf } from './types.ts';

/** A transaction's client (or the client itself, for a single-statement write made atomic by it). */
export type Tx = Prisma.TransactionClient;

/** A payload value: JSON, with dates as text. */
export type PayloadValue =
  | string
  | number
  | boolean
  | null
  | readonly PayloadValue[]
  | { [key: string]: PayloadValue };

export interface EventInput {
  type: EventType;
  resourceId?: number;
  siteId?: number | null;
  channelId?: number | null;
  /** Compact: the changed fields of an update, the identifying fields otherwise. */
  payload?: Record<string, PayloadValue | Date | undefined>;
  /** Who made the write: the operation's caller (actorOf its principal), or `SYSTEM_ACTOR`. */
  actor: Actor;
}

/**
 * Field names whose values never enter an event, whatever a write passes: an event is readable by
 * every webhook receiver and the activity log, so password material and credentials stay out.
 */
const SECRET_FIELD = /password|salt|hash|digest|secret|token|key$/i;

/** A long text (a content's body) enters an event cut to this many characters. */
const MAX_TEXT = 200;

function compact(payload: EventInput['payload']): string {
  const out: Record<string, PayloadValue> = {};
  for (const [name, value] of Object.entries(payload ?? {})) {
    if (value === undefined || SECRET_FIELD.test(name)) continue;
    if (value instanceof Date) out[name] = value.toISOString();
    else if (typeof value === 'string' && value.length > MAX_TEXT) out[name] = `${value.slice(0, MAX_TEXT)}…`;
    else out[name] = value;
  }
  return JSON.stringify(out);
}

/**
 * The outbox: every write calls this inside its own transaction, after its change, so that the
 * event commits or rolls back with it (and events of one resource are numbered in the order its
 * writes committed, since the write's row lock is held until then).
 */
export async function recordEvent(tx: Tx, input: EventInput): Promise<void> {
  await tx.event.create({ data: eventRow(input) });
}

/**
 * Several events of one write, in this order, in one statement: a write of 1,000 contents records
 * 1,000 events without 1,000 round trips.
 */
export async function recordEvents(tx: Tx, inputs: readonly EventInput[]): Promise<void> {
  // A multi-row INSERT through raw SQL: createMany of 1,000 rows spent most of its time in the
  // client's query compiler. The adapter binds the date as the client's own writes do.
  const createdAt = new Date();
  for (let start = 0; start < inputs.length; start += EVENTS_PER_STATEMENT) {
    const rows = inputs.slice(start, start + EVENTS_PER_STATEMENT).map((input) => {
      const row = eventRow(input);
      return sql`(${row.type}, ${row.resourceType}, ${row.resourceId}, ${row.siteId}, ${row.channelId}, ${row.actorType}, ${row.actorId}, ${row.payload}, ${createdAt})`;
    });
    await tx.$executeRaw(
      sql`INSERT INTO "Event" ("type", "resourceType", "resourceId", "siteId", "channelId", "actorType", "actorId", "payload", "createdAt") VALUES ${joinSql(rows)}`,
    );
  }
}

const EVENT_INSERT = `INSERT INTO "Event" ("type", "resourceType", "resourceId", "siteId", "channelId", "actorType", "actorId", "payload", "createdAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * recordEvent as the end of one PostgreSQL statement: `INSERT … SELECT` of the event once per row
 * of `source` (a CTE of the statement), its values bound through `bind` (which answers the
 * parameter's placeholder, and binds a Date as the column's text). Each value is cast: a parameter
 * in a SELECT list has no type else. `resourceIdFrom`: the resource's id is that column of the
 * source (a row the statement inserts has no id before it), not the input's.
 */
export function eventInsertFrom(
  source: string,
  input: EventInput,
  bind: (value: unknown) => string,
  resourceIdFrom?: string,
): string {
  const row = eventRow(input);
  const resourceId = resourceIdFrom ?? bind(row.resourceId);
  return `INSERT INTO "Event" ("type", "resourceType", "resourceId", "siteId", "channelId", "actorType", "actorId", "payload", "createdAt")
    SELECT ${bind(row.type)}::text, ${bind(row.resourceType)}::text, ${resourceId}::int, ${bind(row.siteId)}::int,
      ${bind(row.channelId)}::int, ${bind(row.actorType)}::text, ${bind(row.actorId)}::int, ${bind(row.payload)}::text,
      ${bind(new Date())}::timestamp(3) FROM ${source}`;
}

/** recordEvent in a synchronous write transaction of the point writes (src/db/pointWrites.ts). */
export function recordEventIn(tx: SyncWrite, input: EventInput): void {
  const row = eventRow(input);
  tx.run(EVENT_INSERT, [
    row.type,
    row.resourceType,
    row.resourceId,
    row.siteId,
    row.channelId,
    row.actorType,
    row.actorId,
    row.payload,
    new Date(),
  ]);
}

/** 9 parameters each: far below SQLite's (32,766) and PostgreSQL's (65,535) limits per statement. */
const EVENTS_PER_STATEMENT = 1000;

function eventRow(input: EventInput) {
  const { actor } = input;
  return {
    type: input.type,
    resourceType: resourceTypeOf(input.type),
    resourceId: input.resourceId ?? 0,
    siteId: input.siteId ?? null,
    channelId: input.channelId ?? null,
    actorType: actor.type,
    actorId: actor.id,
    payload: compact(input.payload),
  };
}

/** The fields of `after` that differ from `before`, for an update's payload. */
export function changedFields<T extends object>(before: T, after: T, fields: readonly (keyof T & string)[]) {
  const changed: Record<string, PayloadValue | Date> = {};
  for (const field of fields) {
    const a = before[field];
    const b = after[field];
    const same = a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;
    if (!same) changed[field] = b as PayloadValue | Date;
  }
  return changed;
}

/** The site and channel of a content target, for the event's filters. */
export function placeOf(target: { siteId: number; channelId: number }) {
  return { siteId: target.siteId, channelId: target.channelId };
}

/**
 * The plain values (texts, numbers, flags, dates) of an update's data: what it set. Computed values
 * (`{ increment: 1 }`) are left out, and recordEvent drops password material by name.
 */
export function plainFields(data: Record<string, unknown>): Record<string, PayloadValue | Date> {
  const fields: Record<string, PayloadValue | Date> = {};
  for (const [name, value] of Object.entries(data)) {
    if (
      typeof value === 'string' ||
      typeof value === 'number' ||
      typeof value === 'boolean' ||
      value === null ||
      value instanceof Date
    )
      fields[name] = value;
  }
  return fields;
}

/** An event that is the whole write (a restart requested): recorded on its own. */
export async function recordAlone(db: Db, input: EventInput) {
  await writeTransaction(db, (tx) => recordEvent(tx, input));
}
