import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import type {
  SqlDriverAdapter,
  SqlMigrationAwareDriverAdapterFactory,
  SqlQuery,
} from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { type DbProvider, providerOf, SQLITE_TIMESTAMP_FORMAT, sqliteFilePath } from '../client.ts';
import {
  CatalogSafeClient,
  createDatabase,
  dropDatabase,
  uniqueDatabaseName,
  withDatabase,
} from './postgres.ts';

/**
 * What the schema engine talks to during one command: an adapter factory over the same driver
 * adapters as the application, which remembers every connection it handed out, because
 * `engine.free()` closes none of them (a leftover SQLite connection holds an exclusive lock; a
 * leftover pg pool stalls the next command).
 */
export interface EngineConnection {
  readonly provider: DbProvider;
  readonly factory: SqlMigrationAwareDriverAdapterFactory;
  /** Disposes every connection still open, shadow databases included. */
  close(): Promise<void>;
}

type Connect = () => Promise<SqlDriverAdapter>;

export function engineConnection(databaseUrl: string): EngineConnection {
  return providerOf(databaseUrl) === 'sqlite'
    ? sqliteConnection(databaseUrl)
    : postgresConnection(databaseUrl);
}

function sqliteConnection(databaseUrl: string): EngineConnection {
  const driver = new PrismaBetterSqlite3(
    { url: sqliteFilePath(databaseUrl) },
    { timestampFormat: SQLITE_TIMESTAMP_FORMAT },
  );
  // The engine replays a whole migration file as one parameterless execution, which better-sqlite3
  // refuses to prepare; its script path runs several statements.
  const wrap =
    (connect: Connect): Connect =>
    async () => {
      const adapter = await connect();
      // Prisma redefines a SQLite table by creating new_X, dropping X and renaming new_X to X. Since
      // SQLite 3.26 that rename fails while a view reads X ("error in view …: no such table"), as
      // the public views of stl/sqlContents do (prisma/orm#10919). The legacy rename does not check
      // views, which read X again once the rename is done. (In this mode a hand-written RENAME does
      // not rewrite other tables' references to the renamed table: write those out.)
      await adapter.executeScript('PRAGMA legacy_alter_table = ON');
      return delegate(adapter, {
        executeRaw: (query: SqlQuery) =>
          query.args.length === 0
            ? adapter.executeScript(query.sql).then(() => 0)
            : adapter.executeRaw(query),
      });
    };
  return trackingConnection(
    'sqlite',
    driver.adapterName,
    wrap(() => driver.connect()),
    wrap(() => driver.connectToShadowDb()),
  );
}

function postgresConnection(databaseUrl: string): EngineConnection {
  const connect =
    (url: string): Connect =>
    async () => {
      const pool = new pg.Pool({ connectionString: url, Client: CatalogSafeClient });
      // The adapter ships its own, newer @types/pg; at run time both use this project's pg.
      const external = pool as unknown as ConstructorParameters<typeof PrismaPg>[0];
      const adapter = await new PrismaPg(external, { disposeExternalPool: true }).connect();
      // The adapter's script path splits on every `;`, even inside comments and strings; one
      // parameterless query goes through the simple protocol, which runs several statements.
      return delegate(adapter, {
        executeScript: async (script: string) => {
          await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
        },
      });
    };
  // The stock shadow connection reaches the main database again (its URL wins over the database
  // name it sets): create a real one beside the main database and drop it on dispose.
  const connectShadow: Connect = async () => {
    const server = databaseUrl;
    const name = uniqueDatabaseName('prisma_shadow');
    await createDatabase(server, name);
    let adapter: SqlDriverAdapter;
    try {
      adapter = await connect(withDatabase(server, name))();
    } catch (error) {
      await dropDatabase(server, name);
      throw error;
    }
    return delegate(adapter, {
      dispose: async () => {
        await adapter.dispose();
        await dropDatabase(server, name);
      },
    });
  };
  return trackingConnection('postgresql', 'migration-pg', connect(databaseUrl), connectShadow);
}

function delegate(adapter: SqlDriverAdapter, overrides: Partial<SqlDriverAdapter>): SqlDriverAdapter {
  const base: SqlDriverAdapter = {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    queryRaw: (query) => adapter.queryRaw(query),
    executeRaw: (query) => adapter.executeRaw(query),
    executeScript: (script) => adapter.executeScript(script),
    startTransaction: (isolationLevel) => adapter.startTransaction(isolationLevel),
    dispose: () => adapter.dispose(),
  };
  const info = adapter.getConnectionInfo?.bind(adapter);
  if (info) base.getConnectionInfo = info;
  return { ...base, ...overrides };
}

function trackingConnection(
  provider: DbProvider,
  adapterName: string,
  connectMain: Connect,
  connectShadow: Connect,
): EngineConnection {
  const open = new Set<SqlDriverAdapter>();
  const track =
    (connect: Connect): Connect =>
    async () => {
      const adapter = await connect();
      let disposing: Promise<void> | undefined;
      const tracked = delegate(adapter, {
        dispose: () => {
          disposing ??= adapter.dispose().finally(() => open.delete(tracked));
          return disposing;
        },
      });
      open.add(tracked);
      return tracked;
    };
  return {
    provider,
    factory: {
      provider: provider === 'sqlite' ? 'sqlite' : 'postgres',
      adapterName,
      connect: track(connectMain),
      connectToShadowDb: track(connectShadow),
    },
    async close() {
      const results = await Promise.allSettled([...open].map((adapter) => adapter.dispose()));
      const failure = results.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    },
  };
}
