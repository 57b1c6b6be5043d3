import type { Db } from '../../db/client.ts';
import type { ApiKey } from '../../db/models.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { grantedScopes } from '../access.ts';
import { digestApiKey, generateApiKey } from '../crypto/apiKeys.ts';
import { formatDateTime, parseDateTime } from '../dates.ts';
import { conflict, forbidden, invalidFields, notFound } from '../errors.ts';
import { actorOf } from '../events/actor.ts';
import { type EventInput, recordEvent } from '../events/record.ts';
import type { Principal, Scope } from '../principal.ts';
import {
  NEXT_VERSION,
  type Precondition,
  PreconditionFailed,
  type Versioned,
  versionFilter,
} from '../versions.ts';
import { issueApiKey } from './issueApiKey.ts';
import { joinScopes, parseScopes } from './scopes.ts';

/*
 * Management of API keys: list, create, change, delete, reset. The key itself exists only in the
 * answers of create and reset; the database keeps its SHA-256 digest, so no other answer (and no
 * log line) can contain it.
 *
 * The `ApiKeys` scope must not be a way to more power: an API key may create or grant only scopes
 * it carries itself, and may change, delete or reset only keys whose scopes it carries (resetting
 * a stronger key would hand its caller that key). An administrator's token carries every scope.
 * Nor may it be a way to looser limits: a key it creates or changes is never looser than itself
 * (expiry no later, rate limit no higher), so it never loosens its own either, and it resets only
 * keys no looser than itself. A limit left out of a key it creates is its own.
 */

export type ApiKeyRecord = components['schemas']['ApiKey'];
export type IssuedApiKeyRecord = components['schemas']['IssuedApiKey'];
type CreateRequest = components['schemas']['CreateApiKeyRequest'];
type UpdateRequest = components['schemas']['UpdateApiKeyRequest'];

/** A key's row without its digest: the digest is never even read here. */
type ApiKeyRow = Omit<ApiKey, 'digest'>;

/**
 * The columns a record is made of. Checked against the contract's ApiKey schema (a field missing
 * or extra on either side does not compile), and the row type comes from the model.
 */
const RECORD_COLUMNS = {
  id: true,
  title: true,
  scopes: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
  rateLimitPerMinute: true,
} as const satisfies Record<keyof ApiKeyRecord, true>;

/** What is read of a key: its record and its version (the record's ETag, src/domain/versions.ts). */
const ROW_COLUMNS = { ...RECORD_COLUMNS, version: true } as const;

const dateOrNull = (date: Date | null) => (date === null ? null : formatDateTime(date));

function toRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    title: row.title,
    scopes: [...parseScopes(row.scopes)],
    createdAt: formatDateTime(row.createdAt),
    lastUsedAt: dateOrNull(row.lastUsedAt),
    expiresAt: dateOrNull(row.expiresAt),
    revokedAt: dateOrNull(row.revokedAt),
    rateLimitPerMinute: row.rateLimitPerMinute,
  };
}

/** Throws `forbidden` unless the principal carries every one of these scopes. */
function assertCarries(principal: Principal, scopes: Iterable<Scope>, what: string): void {
  const granted = grantedScopes(principal);
  const missing = [...scopes].filter((scope) => !granted.has(scope));
  if (missing.length === 0) return;
  const names = missing.map((scope) => `'${scope}'`).join(', ');
  throw forbidden(`${what} needs the ${names} scope, which these credentials do not carry`);
}

/** A key's limits: when it stops working and its requests a minute (null: never, unlimited). */
interface Limits {
  expiresAt: Date | null;
  rateLimitPerMinute: number | null;
}

/** The limits of the calling key; null for a caller without any (an administrator's token). */
async function callerLimits(db: Db, principal: Principal): Promise<Limits | null> {
  if (principal.kind !== 'apiKey') return null;
  const row = await db.apiKey.findUnique({
    where: { id: principal.apiKeyId },
    select: { expiresAt: true, rateLimitPerMinute: true },
  });
  // Deleted since it authenticated: it may not act at all.
  if (row === null) throw forbidden('The calling API key no longer exists');
  return row;
}

/** Throws `forbidden` when `limits` are looser than the caller's own. */
function assertNoLooser(caller: Limits | null, limits: Limits, what: string): void {
  if (caller === null) return;
  const problems: string[] = [];
  if (
    caller.expiresAt !== null &&
    (limits.expiresAt === null || limits.expiresAt.getTime() > caller.expiresAt.getTime())
  ) {
    problems.push(`expire no later than ${formatDateTime(caller.expiresAt)}`);
  }
  if (
    caller.rateLimitPerMinute !== null &&
    (limits.rateLimitPerMinute === null || limits.rateLimitPerMinute > caller.rateLimitPerMinute)
  ) {
    problems.push(`allow no more than ${caller.rateLimitPerMinute} requests a minute`);
  }
  if (problems.length === 0) return;
  throw forbidden(
    `${what} must ${problems.join(' and ')}, as the calling key does: a key is never looser than its maker`,
  );
}

/** The expiry of a request: undefined when absent, null to remove, else a date in the future. */
function expiryOf(text: string | null | undefined, now: Date): Date | null | undefined {
  if (text === undefined || text === null) return text;
  const date = parseDateTime(text);
  if (date === undefined) {
    throw invalidFields([{ field: 'expiresAt', message: 'is not a date on the calendar' }]);
  }
  if (date.getTime() <= now.getTime()) {
    throw invalidFields([{ field: 'expiresAt', message: 'must be in the future' }]);
  }
  return date;
}

async function existing(db: Db, id: number): Promise<ApiKeyRow> {
  const row = await db.apiKey.findUnique({ where: { id }, select: ROW_COLUMNS });
  if (row === null) throw notFound(`API key ${id} does not exist`);
  return row;
}

/*
 * The scopes a caller was checked against are part of each write's condition: if another request
 * changed them (or deleted the key) between the check and the write, nothing is written, so a
 * caller never changes a key that has just become stronger than itself.
 */
async function explainMiss(db: Db, id: number, precondition: Precondition | undefined): Promise<never> {
  const row = await existing(db, id);
  if (precondition !== undefined) throw new PreconditionFailed(`API key ${id}`, row.version);
  throw conflict(`API key ${id} was changed by another request meanwhile; try again`);
}

/** A stale If-Match is refused before anything else is decided on the row read. */
function assertPrecondition(current: ApiKeyRow, precondition: Precondition | undefined): void {
  if (precondition?.kind === 'versions' && !precondition.versions.includes(current.version)) {
    throw new PreconditionFailed(`API key ${current.id}`, current.version);
  }
}

/** Writes `data` if the key still has the scopes (and the version) it was checked with; answers its new version. */
async function writeChecked(
  db: Db,
  current: ApiKeyRow,
  data: Parameters<Db['apiKey']['updateMany']>[0]['data'],
  event: Pick<EventInput, 'type' | 'payload' | 'actor'>,
  precondition: Precondition | undefined,
): Promise<number> {
  const version = await writeTransaction(db, async (tx) => {
    const written = await tx.apiKey.updateMany({
      where: { id: current.id, scopes: current.scopes, ...versionFilter(precondition) },
      data: { ...data, ...NEXT_VERSION },
    });
    if (written.count === 0) return undefined;
    await recordEvent(tx, { ...event, resourceId: current.id });
    const row = await tx.apiKey.findUnique({ where: { id: current.id }, select: { version: true } });
    return row?.version;
  });
  return version ?? explainMiss(db, current.id, precondition);
}

export async function listApiKeys(db: Db): Promise<ApiKeyRecord[]> {
  const rows = await db.apiKey.findMany({ select: ROW_COLUMNS, orderBy: { id: 'asc' } });
  return rows.map(toRecord);
}

export async function createApiKey(
  db: Db,
  principal: Principal,
  request: CreateRequest,
  now = new Date(),
): Promise<Versioned<IssuedApiKeyRecord>> {
  assertCarries(principal, request.scopes, 'Granting these scopes');
  const caller = await callerLimits(db, principal);
  const limits: Limits = {
    expiresAt:
      expiryOf(request.expiresAt, now) ?? (request.expiresAt === null ? null : (caller?.expiresAt ?? null)),
    rateLimitPerMinute:
      request.rateLimitPerMinute === undefined
        ? (caller?.rateLimitPerMinute ?? null)
        : request.rateLimitPerMinute,
  };
  assertNoLooser(caller, limits, 'The new key');
  const { id, key } = await issueApiKey(
    db,
    { title: request.title, scopes: request.scopes, ...limits },
    actorOf(principal),
  );
  const row = await existing(db, id);
  return { record: { key, apiKey: toRecord(row) }, version: row.version };
}

export async function updateApiKey(
  db: Db,
  principal: Principal,
  id: number,
  request: UpdateRequest,
  precondition?: Precondition,
  now = new Date(),
): Promise<Versioned<ApiKeyRecord>> {
  const current = await existing(db, id);
  assertPrecondition(current, precondition);
  assertCarries(principal, parseScopes(current.scopes), `Changing API key ${id}`);
  if (request.scopes !== undefined) assertCarries(principal, request.scopes, 'Granting these scopes');
  const expiresAt = expiryOf(request.expiresAt, now);
  assertNoLooser(
    await callerLimits(db, principal),
    {
      expiresAt: expiresAt === undefined ? current.expiresAt : expiresAt,
      rateLimitPerMinute:
        request.rateLimitPerMinute === undefined ? current.rateLimitPerMinute : request.rateLimitPerMinute,
    },
    `API key ${id}`,
  );
  const changes = {
    title: request.title,
    scopes: request.scopes === undefined ? undefined : joinScopes(request.scopes),
    expiresAt,
    rateLimitPerMinute: request.rateLimitPerMinute,
  };
  await writeChecked(
    db,
    current,
    changes,
    { type: 'apiKey.updated', payload: changes, actor: actorOf(principal) },
    precondition,
  );
  const row = await existing(db, id);
  return { record: toRecord(row), version: row.version };
}

export async function deleteApiKey(
  db: Db,
  principal: Principal,
  id: number,
  precondition?: Precondition,
): Promise<ApiKeyRecord> {
  const current = await existing(db, id);
  assertPrecondition(current, precondition);
  assertCarries(principal, parseScopes(current.scopes), `Deleting API key ${id}`);
  const count = await writeTransaction(db, async (tx) => {
    const deleted = await tx.apiKey.deleteMany({
      where: { id, scopes: current.scopes, ...versionFilter(precondition) },
    });
    if (deleted.count > 0)
      await recordEvent(tx, { type: 'apiKey.deleted', resourceId: id, actor: actorOf(principal) });
    return deleted.count;
  });
  if (count === 0) await explainMiss(db, id, precondition);
  return toRecord(current);
}

/**
 * A new secret for the key. The old one stops at once: authentication looks every request's key
 * up by digest, and the old digest is gone.
 */
export async function resetApiKey(
  db: Db,
  principal: Principal,
  id: number,
  precondition?: Precondition,
): Promise<Versioned<IssuedApiKeyRecord>> {
  const current = await existing(db, id);
  assertPrecondition(current, precondition);
  assertCarries(principal, parseScopes(current.scopes), `Resetting API key ${id}`);
  // A new secret of a looser key would be a looser key in the caller's hands.
  assertNoLooser(await callerLimits(db, principal), current, `API key ${id}, to be reset,`);
  const key = generateApiKey();
  const version = await writeChecked(
    db,
    current,
    { digest: digestApiKey(key) },
    { type: 'apiKey.reset', actor: actorOf(principal) },
    precondition,
  );
  return { record: { key, apiKey: toRecord(current) }, version };
}
