import { SQLITE_TIME_LIMIT_CODE } from '../db/sqliteTimeLimit.ts';

/*
 * Recognising database failures by code, never by message text: Prisma wraps driver errors, and its
 * `meta` differs between PostgreSQL and SQLite, but codes and driver-adapter kinds are stable.
 */

/** Prisma codes for "cannot reach / lost / timed out waiting for" the database. */
const UNAVAILABLE_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);

/** Driver-adapter error kinds with the same meaning (SQLite's "database is busy" is SocketTimeout). */
const UNAVAILABLE_ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'DatabaseDoesNotExist',
  'DatabaseAccessDenied',
  'AuthenticationFailed',
  'ConnectionClosed',
  'TlsConnectionError',
  'TooManyConnections',
  'SocketTimeout',
]);

/** Socket-level codes, for errors that come straight from a driver. */
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/**
 * PostgreSQL's SQLSTATEs for a connection the server ended or would not accept: admin_shutdown
 * (pg_terminate_backend, a failover), crash_shutdown, cannot_connect_now (starting up),
 * too_many_connections, and the connection_exception class (08…). pg gives them raw (its own
 * queries) or in Prisma's adapter error (`kind: 'postgres'`); either way the request met a database
 * that is, for the moment, not there.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const CONNECTION_EXCEPTION_CLASS = /^08[0-9A-Z]{3}$/;

/**
 * pg's own words, without a code, for a client whose connection broke (the request that was using
 * it when the server ended it, or the next one given that client).
 */
const LOST_CONNECTION_MESSAGES = new Set([
  'Client has encountered a connection error and is not queryable',
  'Connection terminated unexpectedly',
  'Connection terminated',
  'timeout exceeded when trying to connect',
]);

/**
 * A statement stopped at its time limit: PostgreSQL's query_canceled (statement_timeout), or the
 * SQLite time-limit function's own code (src/db/sqliteTimeLimit.ts), which Prisma's SQLite adapter
 * keeps as the driver error's `originalCode`.
 */
const TIME_LIMIT_CODES = new Set(['57014', SQLITE_TIME_LIMIT_CODE]);

/**
 * PostgreSQL's deadlock_detected and serialization_failure: the database gave up this transaction
 * because of another one running at the same time. Nothing was written; the same request a moment
 * later succeeds. (Writers of one site queue on its content generation row, see the
 * content_count_cache migration, so two bulk writers of one site can deadlock.)
 */
const WRITE_CONFLICT_CODES = new Set(['40P01', '40001']);

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

/** The error and the errors it wraps (cause, Prisma's driverAdapterError), outermost first. */
function chain(error: unknown): unknown[] {
  const seen: unknown[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.length < 8) {
    const next = queue.shift();
    if (typeof next !== 'object' || next === null || seen.includes(next)) continue;
    seen.push(next);
    queue.push(field(next, 'cause'), field(field(next, 'meta'), 'driverAdapterError'));
  }
  return seen;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  return chain(error).some((link) => {
    const code = field(link, 'code');
    const kind = field(link, 'kind');
    const message = field(link, 'message');
    return (
      (typeof code === 'string' &&
        (UNAVAILABLE_PRISMA_CODES.has(code) ||
          UNAVAILABLE_SOCKET_CODES.has(code) ||
          UNAVAILABLE_SQLSTATES.has(code) ||
          CONNECTION_EXCEPTION_CLASS.test(code))) ||
      (typeof kind === 'string' && UNAVAILABLE_ADAPTER_KINDS.has(kind)) ||
      (typeof message === 'string' &&
        LOST_CONNECTION_MESSAGES.has(message) &&
        field(link, 'name') === 'Error')
    );
  });
}

function hasCode(error: unknown, codes: ReadonlySet<string>): boolean {
  return chain(error).some((link) =>
    ['code', 'originalCode'].some((name) => {
      const code = field(link, name);
      return typeof code === 'string' && codes.has(code);
    }),
  );
}

export function isStatementTimeLimit(error: unknown): boolean {
  return hasCode(error, TIME_LIMIT_CODES);
}

export function isWriteConflict(error: unknown): boolean {
  return hasCode(error, WRITE_CONFLICT_CODES);
}

/** Prisma's unique-constraint violation, on either database. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    field(error, 'code') === 'P2002' ||
    chain(error).some((link) => field(link, 'kind') === 'UniqueConstraintViolation')
  );
}
