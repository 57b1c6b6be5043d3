import type BetterSqlite3 from 'better-sqlite3';
import type { PrismaClient as PostgresClient } from '../generated/prisma/postgresql/client.ts';
import type { PrismaClient as SqliteClient } from '../generated/prisma/sqlite/client.ts';
import type { Same } from './models.ts';
import type { PointReads } from './pointReads.ts';

/**
 * The database client as the service uses it, whichever the provider: the model's delegates, raw
 * queries and transactions. `npm run gen` renders one model for both providers, and the build
 * checks that the renders agree — every model, field and field type (models.ts), every member of
 * the client (below). What it cannot check is the generic types of the delegates' methods: they are
 * two generated copies TypeScript does not relate to each other, so they are written once, as the
 * SQLite render has them, and a client of either provider becomes a Db through toDb only.
 */
export type Db = SqliteClient;

// A member (a model's delegate, a $ method) one render's client has and the other's lacks fails the build.
const clientsAgree: Same<keyof SqliteClient, keyof PostgresClient> = true;
void clientsAgree;

/** Either provider's client as the one Db type (see Db for what makes that sound). */
function toDb(client: SqliteClient | PostgresClient): Db {
  return client as unknown as Db;
}

export type DbProvider = 'sqlite' | 'postgresql';

export interface DbHandle {
  db: Db;
  provider: DbProvider;
  /**
   * The client's point reads through the driver (src/db/pointReads.ts). Only for the client itself:
   * an interactive transaction's reads must go through the transaction.
   */
  reads: PointReads;
}

export const DEFAULT_DATABASE_URL = 'file:./data/cms.db';

export const DATABASE_URL_RULE = 'DATABASE_URL must start with file: (SQLite) or postgresql:// (PostgreSQL)';

/** The provider a database URL names, or undefined when it names neither. */
export function providerOfUrl(databaseUrl: string): DbProvider | undefined {
  if (databaseUrl.startsWith('file:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return 'postgresql';
  return undefined;
}

export function providerOf(databaseUrl: string): DbProvider {
  const provider = providerOfUrl(databaseUrl);
  if (provider === undefined) throw new Error(DATABASE_URL_RULE);
  return provider;
}

/** SQLite file path of a `file:` URL (query string dropped). */
export function sqliteFilePath(databaseUrl: string): string {
  return databaseUrl.slice('file:'.length).split('?')[0] ?? '';
}

/**
 * SQLite stores DateTime as epoch milliseconds: raw SQL (the content query compiler) then compares
 * dates as plain integers, exactly as PostgreSQL compares timestamps.
 */
export const SQLITE_TIMESTAMP_FORMAT = 'unixepoch-ms' as const;

export interface DbOptions {
  /**
   * Called after every query the client sends, with its SQL text and how long the driver took, in
   * milliseconds (tests count queries with it; metrics time them, never keeping the text).
   * Prisma's own query events: it times the driver adapter's call, in the client, for both databases.
   */
  onQuery?: (sqlText: string, durationMs: number) => void;
  /**
   * PostgreSQL ends any statement running longer than this (statement_timeout); the service then
   * answers 503.
   */
  statementTimeoutMs?: number;
  /**
   * SQLite ends a content query (list, template-tag contents) that runs longer than this, so that
   * none holds the process's one thread for long (src/db/sqliteTimeLimit.ts). Default 2000.
   */
  sqliteQueryTimeoutMs?: number;
  /**
   * SQLite's page cache of the connection, in KiB. Unset, better-sqlite3's build default: 16 MiB,
   * which a worker fills, and keeps, once its reads have touched that much of a large database
   * (bench/RUNTIME.md, "Memory: Prisma's small query compiler"). The pages it gives up are still in the
   * operating system's file cache, read back by a system call.
   */
  sqliteCacheKib?: number;
}

/**
 * The workers' SQLite page cache, in KiB: a quarter of the default, which lowers a worker's peak
 * memory on a large database at no CPU cost measured; half of this cost deep filtered pages CPU
 * (bench/RUNTIME.md, "Memory: Prisma's small query compiler").
 */
export const SERVICE_SQLITE_CACHE_KIB = 4096;

export const DEFAULT_SQLITE_QUERY_TIMEOUT_MS = 2000;

/*
 * Each provider's modules are loaded once, by whichever createDb comes first. One after the other,
 * not with Promise.all: jest's module linker loses track of modules imported concurrently
 * ("request for 'node:path' is not in cache"). The point reads are loaded here too, not at the top
 * of this file: they import the generated client, and this file's URL helpers are imported by
 * processes that never open a client (the supervisor reads its configuration with them).
 */
async function loadSqlite() {
  const { PrismaBetterSqlite3 } = await import('@prisma/adapter-better-sqlite3');
  const { PrismaClient: SqliteClient } = await import('../generated/prisma/sqlite/client.ts');
  const { withTimeLimit } = await import('./sqliteTimeLimit.ts');
  const { sqlitePointReads } = await import('./pointReads.ts');
  const { SqliteCostlyReads, registerCostlyReads } = await import('./costlyReads.ts');
  return {
    PrismaBetterSqlite3,
    SqliteClient,
    withTimeLimit,
    sqlitePointReads,
    SqliteCostlyReads,
    registerCostlyReads,
  };
}

async function loadPostgres() {
  const { default: pg } = await import('pg');
  const { PrismaPg } = await import('@prisma/adapter-pg');
  const { PrismaClient: PostgresClient } = await import('../generated/prisma/postgresql/client.ts');
  const { postgresPointReads } = await import('./pointReads.ts');
  return { pg, PrismaPg, PostgresClient, postgresPointReads };
}

let sqliteModules: ReturnType<typeof loadSqlite> | undefined;
let postgresModules: ReturnType<typeof loadPostgres> | undefined;

/**
 * A client of the database the URL names. Only that provider's generated client and driver adapter
 * are loaded (PostgreSQL's `pg` and its client would cost a SQLite service start-up time and
 * memory for nothing), hence a promise.
 */
export async function createDb(databaseUrl: string, options: DbOptions = {}): Promise<DbHandle> {
  const provider = providerOf(databaseUrl);
  const log = options.onQuery ? [{ emit: 'event' as const, level: 'query' as const }] : [];
  let db: Db;
  let reads: PointReads;
  if (provider === 'sqlite') {
    sqliteModules ??= loadSqlite();
    const { PrismaBetterSqlite3, SqliteClient, withTimeLimit, sqlitePointReads, ...costly } =
      await sqliteModules;
    let connection: BetterSqlite3.Database | undefined;
    const file = sqliteFilePath(databaseUrl);
    const limitMs = options.sqliteQueryTimeoutMs ?? DEFAULT_SQLITE_QUERY_TIMEOUT_MS;
    const costlyReads = new costly.SqliteCostlyReads(
      { file, limitMs, cacheKib: options.sqliteCacheKib },
      options.onQuery,
    );
    const adapter = withTimeLimit(
      new PrismaBetterSqlite3({ url: file }, { timestampFormat: SQLITE_TIMESTAMP_FORMAT }),
      limitMs,
      (opened) => {
        // A negative cache_size is a size in KiB (SQLite's convention), not a number of pages.
        if (options.sqliteCacheKib !== undefined) opened.pragma(`cache_size = -${options.sqliteCacheKib}`);
        connection = opened;
      },
      () => costlyReads.close(),
    );
    const client = toDb(new SqliteClient({ adapter, log }));
    costly.registerCostlyReads(client, costlyReads);
    db = client;
    reads = sqlitePointReads(async () => {
      // The adapter opens its connection on the client's first query.
      if (connection === undefined || !connection.open) await client.$connect();
      if (connection === undefined) throw new Error('The SQLite adapter opened no connection');
      return connection;
    }, options.onQuery);
  } else {
    postgresModules ??= loadPostgres();
    const { pg, PrismaPg, PostgresClient, postgresPointReads } = await postgresModules;
    // The pool is made here, not by the adapter, so that the point reads share it; the adapter
    // still ends it on $disconnect.
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      ...(options.statementTimeoutMs !== undefined && { statement_timeout: options.statementTimeoutMs }),
    });
    // An idle client's error before the adapter attaches its own listener must not end the process;
    // the next query on the pool fails and is answered like any unavailable database.
    pool.on('error', () => {});
    // The adapter's @types/pg is a newer copy than ours (the same pg at run time, as its instanceof
    // check needs): the cast bridges the two declarations only.
    const adapter = new PrismaPg(pool as unknown as ConstructorParameters<typeof PrismaPg>[0], {
      disposeExternalPool: true,
    });
    db = toDb(new PostgresClient({ adapter, log }));
    reads = postgresPointReads(pool, pg.types, options.onQuery);
  }
  const onQuery = options.onQuery;
  if (onQuery) (db as unknown as QueryEvents).$on('query', (event) => onQuery(event.query, event.duration));
  providers.set(db, provider);
  return { db, provider, reads };
}

/** The provider of every client createDb made, for code that is handed only the client. */
const providers = new WeakMap<Db, DbProvider>();

export function providerOfClient(db: Db): DbProvider {
  const provider = providers.get(db);
  if (provider === undefined) throw new Error('This database client was not made by createDb');
  return provider;
}

/** The part of a logging client's API that reports queries. */
interface QueryEvents {
  $on(event: 'query', listener: (event: { query: string; duration: number }) => void): void;
}
