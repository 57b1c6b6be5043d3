import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient as PostgresClient } from '../generated/prisma/postgresql/client.ts';
import { PrismaClient as SqliteClient } from '../generated/prisma/sqlite/client.ts';
import { withTimeLimit } from './sqliteTimeLimit.ts';

/**
 * The application-facing database type. Both generated clients come from one model, so their
 * query APIs are the same; the SQLite client's type stands for both.
 */
export type Db = SqliteClient;

export type DbProvider = 'sqlite' | 'postgresql';

export interface DbHandle {
  db: Db;
  provider: DbProvider;
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
}

export const DEFAULT_SQLITE_QUERY_TIMEOUT_MS = 2000;

export function createDb(databaseUrl: string, options: DbOptions = {}): DbHandle {
  const provider = providerOf(databaseUrl);
  const log = options.onQuery ? [{ emit: 'event' as const, level: 'query' as const }] : [];
  let db: Db;
  if (provider === 'sqlite') {
    const adapter = withTimeLimit(
      new PrismaBetterSqlite3(
        { url: sqliteFilePath(databaseUrl) },
        { timestampFormat: SQLITE_TIMESTAMP_FORMAT },
      ),
      options.sqliteQueryTimeoutMs ?? DEFAULT_SQLITE_QUERY_TIMEOUT_MS,
    );
    db = new SqliteClient({ adapter, log }) as unknown as Db;
  } else {
    const adapter = new PrismaPg({
      connectionString: databaseUrl,
      ...(options.statementTimeoutMs !== undefined && { statement_timeout: options.statementTimeoutMs }),
    });
    db = new PostgresClient({ adapter, log }) as unknown as Db;
  }
  const onQuery = options.onQuery;
  if (onQuery) (db as unknown as QueryEvents).$on('query', (event) => onQuery(event.query, event.duration));
  providers.set(db, provider);
  return { db, provider };
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

/**
 * Settings a database needs before the service uses it. SQLite runs in WAL mode, so readers never
 * wait for the writer (the mode is kept in the file, so this is needed once, and is cheap again).
 */
export async function prepareDatabase({ db, provider }: DbHandle): Promise<void> {
  if (provider === 'sqlite') await db.$queryRawUnsafe('PRAGMA journal_mode = WAL');
}
