import type BetterSqlite3 from 'better-sqlite3';
import type pg from 'pg';
import { providerOf, sqliteFilePath } from './client.ts';

/*
 * The few statements `npm start` runs once before any worker touches the database (src/main.ts),
 * on one connection of the plain driver. Through Prisma they cost the supervisor its client, the
 * query compiler's WebAssembly and a first query on every start (bench/RUNTIME.md, "Start-up")
 * for three statements; the workers load Prisma anyway, for themselves.
 */

export interface PreparationConnection {
  /** Settings the database keeps: SQLite's WAL mode, so readers never wait for the writer. */
  applySettings(): Promise<void>;
  /** Sites in the database (0: an empty database, which may get the demo seed). */
  siteCount(): Promise<number>;
  /**
   * The SystemSetting row `key`, created with `candidate` when there is none. Nodes starting
   * together race on the insert: the loser's insert does nothing and it reads the winner's value.
   */
  settingOnce(key: string, candidate: string): Promise<string>;
  close(): Promise<void>;
}

/** How long a statement waits while another process writes the SQLite file (better-sqlite3's default). */
const SQLITE_BUSY_WAIT_MS = 5000;

const SITE_COUNT_SQL = 'SELECT COUNT(*) AS "count" FROM "Site"';

export async function openPreparation(databaseUrl: string): Promise<PreparationConnection> {
  return providerOf(databaseUrl) === 'sqlite' ? openSqlite(databaseUrl) : openPostgres(databaseUrl);
}

async function openSqlite(databaseUrl: string): Promise<PreparationConnection> {
  const { default: Database } = await import('better-sqlite3');
  // The migrations created the file; a missing one is an error here, not a new empty database.
  const db: BetterSqlite3.Database = new Database(sqliteFilePath(databaseUrl), {
    fileMustExist: true,
    timeout: SQLITE_BUSY_WAIT_MS,
  });
  return {
    applySettings: async () => {
      db.pragma('journal_mode = WAL');
    },
    siteCount: async () => Number((db.prepare(SITE_COUNT_SQL).get() as { count: number }).count),
    settingOnce: async (key, candidate) => {
      db.prepare(
        'INSERT INTO "SystemSetting" ("key", "value") VALUES (?, ?) ON CONFLICT ("key") DO NOTHING',
      ).run(key, candidate);
      return settingValue(db.prepare('SELECT "value" FROM "SystemSetting" WHERE "key" = ?').get(key), key);
    },
    close: async () => {
      db.close();
    },
  };
}

async function openPostgres(databaseUrl: string): Promise<PreparationConnection> {
  const { default: driver } = await import('pg');
  const client: pg.Client = new driver.Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    applySettings: async () => undefined,
    siteCount: async () =>
      Number((await client.query<{ count: string }>(SITE_COUNT_SQL)).rows[0]?.count ?? 0),
    settingOnce: async (key, candidate) => {
      await client.query(
        'INSERT INTO "SystemSetting" ("key", "value") VALUES ($1, $2) ON CONFLICT ("key") DO NOTHING',
        [key, candidate],
      );
      const { rows } = await client.query<{ value: string }>(
        'SELECT "value" FROM "SystemSetting" WHERE "key" = $1',
        [key],
      );
      return settingValue(rows[0], key);
    },
    close: () => client.end(),
  };
}

function settingValue(row: unknown, key: string): string {
  const value = (row as { value?: unknown } | undefined)?.value;
  // Only a row deleted between the insert and the read could be missing.
  if (typeof value !== 'string') throw new Error(`SystemSetting ${key} could not be read back`);
  return value;
}
