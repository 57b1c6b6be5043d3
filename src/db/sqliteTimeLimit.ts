import type { SqlDriverAdapter, SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type BetterSqlite3 from 'better-sqlite3';
import { compileLikePattern, likeMatches } from './likePatterns.ts';

/*
 * A time limit for SQLite's expensive reads. better-sqlite3 runs a statement on the event loop's
 * thread and can neither interrupt it nor register SQLite's progress handler, so a costly content
 * list (a `Like` over 100,000 bodies) would hold a worker, health checks included, for seconds.
 * Instead, the queries that can be costly carry a call of the function below in their WHERE clause,
 * first, with the time the query was issued: SQLite calls it for every row it examines, and once
 * the query has run past the limit it throws, which ends the statement. The function is not
 * declared deterministic, so SQLite never evaluates it once and keeps the result. The cost is one
 * cheap call per row examined (about a quarter of a microsecond here). The conditions that call
 * these functions are made by src/db/sqliteLimitedSql.ts; this file loads nothing of Prisma's, so
 * that the thread of src/db/costlyReads.ts can install the functions on its own connection.
 */

export const SQLITE_TIME_LIMIT_FUNCTION = 'cms_time_limit';

/** The error code the function throws with; the HTTP layer answers it like a PostgreSQL statement_timeout. */
export const SQLITE_TIME_LIMIT_CODE = 'CMS_SQLITE_TIME_LIMIT';

class TimeLimitExceeded extends Error {
  readonly code = SQLITE_TIME_LIMIT_CODE;
  constructor(limitMs: number) {
    super(`The query ran past its limit of ${limitMs} ms`);
  }
}

export const SQLITE_LIKE_FUNCTION = 'cms_like';

/** How much matching work (characters looked at) is done between two readings of the clock. */
const WORK_BETWEEN_CLOCK_READINGS = 1 << 16;
/** Compiled patterns kept per connection (a request has at most a few dozen). */
const PATTERN_CACHE_SIZE = 256;

/**
 * Adds the time-limit functions to a connection: a query issued at `issuedAt` may run `limitMs`.
 * Time before `countFrom` is not counted: a connection opened after the query was issued (the read
 * thread's, started by its first read) does not charge its own start to that query.
 */
export function installTimeLimit(database: BetterSqlite3.Database, limitMs: number, countFrom = 0): void {
  const startOf = (issuedAt: unknown) => Math.max(Number(issuedAt), countFrom);
  database.function(SQLITE_TIME_LIMIT_FUNCTION, { deterministic: false }, (issuedAt: unknown) => {
    if (Date.now() - startOf(issuedAt) >= limitMs) throw new TimeLimitExceeded(limitMs);
    return 1;
  });
  const patterns = new Map<string, ReturnType<typeof compileLikePattern>>();
  database.function(
    SQLITE_LIKE_FUNCTION,
    { deterministic: false },
    (subject: unknown, pattern: unknown, issuedAt: unknown) => {
      if (subject === null || pattern === null) return null;
      const deadline = startOf(issuedAt) + limitMs;
      if (Date.now() >= deadline) throw new TimeLimitExceeded(limitMs);
      const text = String(pattern);
      let compiled = patterns.get(text);
      if (compiled === undefined) {
        if (patterns.size >= PATTERN_CACHE_SIZE) patterns.clear();
        compiled = compileLikePattern(text);
        patterns.set(text, compiled);
      }
      let spent = 0;
      const budget = {
        spend(units: number) {
          spent += units;
          if (spent < WORK_BETWEEN_CLOCK_READINGS) return;
          spent = 0;
          if (Date.now() >= deadline) throw new TimeLimitExceeded(limitMs);
        },
      };
      return likeMatches(String(subject), compiled, budget) ? 1 : 0;
    },
  );
}

/** The better-sqlite3 connection inside Prisma's adapter (its `client` field). */
function connectionOf(adapter: SqlDriverAdapter): BetterSqlite3.Database {
  const client = (adapter as unknown as { client?: BetterSqlite3.Database }).client;
  if (client === undefined || typeof client.function !== 'function') {
    throw new Error(
      'The SQLite adapter no longer exposes its connection: the time limit cannot be installed',
    );
  }
  return client;
}

/**
 * The adapter factory, with the time-limit function on every connection it opens. `opened` is told
 * each connection (the point reads of src/db/pointReads.ts run their statements on it) and may give
 * the adapter a view of it to use instead (src/db/keptStatements.ts); `disposed` is told when the
 * client lets the connection go ($disconnect).
 */
export function withTimeLimit(
  factory: SqlDriverAdapterFactory,
  limitMs: number,
  opened?: (connection: BetterSqlite3.Database) => object | undefined,
  disposed?: () => Promise<void>,
): SqlDriverAdapterFactory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    async connect() {
      const adapter = await factory.connect();
      const connection = connectionOf(adapter);
      installTimeLimit(connection, limitMs);
      const view = opened?.(connection);
      if (view !== undefined) (adapter as unknown as { client: object }).client = view;
      if (disposed === undefined) return adapter;
      const dispose = adapter.dispose.bind(adapter);
      adapter.dispose = async () => {
        await disposed();
        await dispose();
      };
      return adapter;
    },
  };
}
