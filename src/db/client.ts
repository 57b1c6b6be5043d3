import type BetterSqlite3 from 'better-sqlite3';
import type { PrismaClient as PostgresClient } from '../generated/prisma/postgresql/client.ts';
import type { PrismaClient as SqliteClient } from '../generated/prisma/sqlite/client.ts';
import type { CostlyReads } from './costlyReads.ts';
import type { PostgresServesSqliteCalls, Same } from './models.ts';
import type { PointReads } from './pointReads.ts';
import type { PointWrites } from './pointWrites.ts';
import { COMPILER_READ_AS_TEXT } from './queryCompilerWasm.ts';

/**
 * The database client as the service uses it, whichever the provider: the model's delegates, raw
 * queries and transactions. It is a type only — no provider's runtime is loaded for it; createDb
 * loads the one the URL names. `npm run gen` renders one model for both providers; the SQLite
 * render's client type stands for both, because the build checks (models.ts) that the PostgreSQL
 * client takes every argument that type allows, model by model and operation by operation, and
 * returns the same results.
 */
export type Db = SqliteClient;

// A member (a model's delegate, a $ method) one render's client has and the other's lacks fails the build.
const clientsAgree: Same<keyof SqliteClient, keyof PostgresClient> = true;
void clientsAgree;
// An argument SQLite's render allows that PostgreSQL's refuses, or a result they disagree on, fails the build.
const postgresServes: PostgresServesSqliteCalls = true;
void postgresServes;

/**
 * The PostgreSQL client as a Db: what the two checks above prove. TypeScript cannot relate the two
 * renders' generic method signatures by itself (each render declares its own copies), hence the
 * conversion, made here only.
 */
function postgresAsDb(client: PostgresClient): Db {
  return client as unknown as Db;
}

export type DbProvider = 'sqlite' | 'postgresql';

export interface DbHandle {
  db: Db;
  provider: DbProvider;
  /**
   * The client's point reads through the driver (src/db/pointReads.ts). Only for the client itself:
   * an interactive transaction's reads must go through the transaction (on SQLite a point read inside
   * one is refused, src/db/sqliteTurns.ts).
   */
  reads: PointReads;
  /** Where the reads whose cost depends on the data run (src/db/costlyReads.ts); closed with the client. */
  costly: CostlyReads;
  /**
   * The client's point writes through the driver on SQLite (src/db/pointWrites.ts): a fast path a
   * write may try before its ordinary one. Not inside an interactive transaction.
   */
  writes: PointWrites;
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
  /**
   * SQLite: refuse at once a statement that an interactive transaction's work sends on the client
   * instead of on its `tx` (it would wait for that very transaction until its timeout;
   * src/db/sqliteTurns.ts). Default true; the service turns it off in production, where the check's
   * AsyncLocalStorage would cost every request of the process its promise hooks on Node.js 20 and 22.
   */
  refuseClientInsideTransactions?: boolean;
}

/**
 * The workers' SQLite page cache, in KiB: a quarter of the default, which lowers a worker's peak
 * memory on a large database at no CPU cost measured; half of this cost deep filtered pages CPU
 * (bench/RUNTIME.md, "Memory: Prisma's small query compiler").
 */
export const SERVICE_SQLITE_CACHE_KIB = 4096;

export const DEFAULT_SQLITE_QUERY_TIMEOUT_MS = 2000;

/**
 * How long one SQLite statement waits for another process's write lock (SQLite's busy timeout),
 * holding the worker's thread while it waits. A write transaction that still finds the lock taken
 * tries again after a pause that frees the thread (src/db/transaction.ts).
 */
export const SQLITE_BUSY_TIMEOUT_MS = 2000;

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
  const { sqlitePointWrites } = await import('./pointWrites.ts');
  const { SqliteCostlyReads } = await import('./costlyReads.ts');
  const { beginImmediateForWrites } = await import('./transaction.ts');
  const { keepingStatements } = await import('./keptStatements.ts');
  const { ConnectionTurns, refuseClientInsideTransactions, takingTurns } = await import('./sqliteTurns.ts');
  return {
    ConnectionTurns,
    refuseClientInsideTransactions,
    takingTurns,
    beginImmediateForWrites,
    keepingStatements,
    PrismaBetterSqlite3,
    SqliteClient,
    withTimeLimit,
    sqlitePointReads,
    sqlitePointWrites,
    SqliteCostlyReads,
  };
}

async function loadPostgres() {
  const { default: pg } = await import('pg');
  const { PrismaPg } = await import('@prisma/adapter-pg');
  const { PrismaClient: PostgresClient } = await import('../generated/prisma/postgresql/client.ts');
  const pointReads = await import('./pointReads.ts');
  const { NO_POINT_WRITES } = await import('./pointWrites.ts');
  const { PooledCostlyReads } = await import('./costlyReads.ts');
  return { pg, PrismaPg, PostgresClient, pointReads, NO_POINT_WRITES, PooledCostlyReads };
}

// Code, not state: each provider's modules, loaded once, shared by every client made from them.
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
  let costly: CostlyReads;
  let writes: PointWrites;
  if (provider === 'sqlite') {
    sqliteModules ??= loadSqlite();
    const {
      PrismaBetterSqlite3,
      SqliteClient,
      withTimeLimit,
      sqlitePointReads,
      sqlitePointWrites,
      beginImmediateForWrites,
      keepingStatements,
      SqliteCostlyReads,
      ConnectionTurns,
      refuseClientInsideTransactions,
      takingTurns,
    } = await sqliteModules;
    let connection: BetterSqlite3.Database | undefined;
    const file = sqliteFilePath(databaseUrl);
    const limitMs = options.sqliteQueryTimeoutMs ?? DEFAULT_SQLITE_QUERY_TIMEOUT_MS;
    const costlyReads = new SqliteCostlyReads(
      { file, limitMs, cacheKib: options.sqliteCacheKib },
      options.onQuery,
    );
    // Every statement on the one connection, a point read included, waits while another caller's
    // transaction is open on it (src/db/sqliteTurns.ts).
    const turns = new ConnectionTurns();
    const adapter = withTimeLimit(
      new PrismaBetterSqlite3(
        { url: file, timeout: SQLITE_BUSY_TIMEOUT_MS },
        { timestampFormat: SQLITE_TIMESTAMP_FORMAT },
      ),
      limitMs,
      (opened) => {
        // A negative cache_size is a size in KiB (SQLite's convention), not a number of pages.
        if (options.sqliteCacheKib !== undefined) opened.pragma(`cache_size = -${options.sqliteCacheKib}`);
        // Stated, not left to the build's default: a commit writes the WAL without waiting for the
        // disk, so a process kill loses nothing acknowledged, a power loss at most the last commits
        // (docs/operating/databases.md, "Durability").
        opened.pragma('synchronous = NORMAL');
        // The adapter's own statements are kept (src/db/keptStatements.ts); its write transactions
        // begin IMMEDIATE.
        const view = keepingStatements(opened);
        beginImmediateForWrites(view, SQLITE_BUSY_TIMEOUT_MS, turns);
        connection = opened;
        return view;
      },
      () => costlyReads.close(),
    );
    const client: Db = new SqliteClient({
      adapter: takingTurns(adapter, turns),
      log,
      ...COMPILER_READ_AS_TEXT,
    });
    refuseClientInsideTransactions(client, turns, options.refuseClientInsideTransactions ?? true);
    db = client;
    costly = costlyReads;
    reads = sqlitePointReads(
      async () => {
        // The adapter opens its connection on the client's first query.
        if (connection === undefined || !connection.open) await client.$connect();
        if (connection === undefined) throw new Error('The SQLite adapter opened no connection');
        return connection;
      },
      turns,
      options.onQuery,
    );
    // Synchronous from BEGIN to COMMIT, so they need no turn: they decline (and the caller takes
    // writeTransaction, which waits for one) while another transaction is open on the connection.
    writes = sqlitePointWrites(() => connection, SQLITE_BUSY_TIMEOUT_MS, options.onQuery);
  } else {
    postgresModules ??= loadPostgres();
    const { pg, PrismaPg, PostgresClient, pointReads, NO_POINT_WRITES, PooledCostlyReads } =
      await postgresModules;
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
    db = postgresAsDb(new PostgresClient({ adapter, log, ...COMPILER_READ_AS_TEXT }));
    // The adapter ends the pool on $disconnect only if the client has connected: a point read before
    // any Prisma query connects it first, so that $disconnect ends every connection the reads opened.
    let connected: Promise<void> | undefined;
    const connectedPool = async () => {
      // Not kept when it fails: the next read tries again (the database may be back by then).
      connected ??= db.$connect().catch((error: unknown) => {
        connected = undefined;
        throw error;
      });
      await connected;
      return pool;
    };
    reads = pointReads.postgresPointReads(connectedPool, pg.types, options.onQuery);
    // No transaction of point writes on PostgreSQL; a write that fits one statement sends just that.
    const statement = pointReads.postgresStatement(connectedPool, pg.types, options.onQuery);
    writes = { ...NO_POINT_WRITES, statement };
    costly = new PooledCostlyReads(reads.rows, connectedPool);
  }
  const onQuery = options.onQuery;
  if (onQuery) (db as unknown as QueryEvents).$on('query', (event) => onQuery(event.query, event.duration));
  return { db, provider, reads, costly, writes };
}

/** The part of a logging client's API that reports queries. */
interface QueryEvents {
  $on(event: 'query', listener: (event: { query: string; duration: number }) => void): void;
}
