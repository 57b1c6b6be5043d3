import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { MigrationList } from '@prisma/schema-engine-wasm/schema_engine_bg';
import { type DbProvider, providerOf, sqliteFilePath } from '../client.ts';
import { databaseInUse, isSqliteBusy, MigrationError } from './errors.ts';
import { migrationNames } from './files.ts';

/*
 * What Prisma's `_prisma_migrations` table says, read with the plain drivers and compared with the
 * migrations folder, without the schema engine: the engine takes the database's migration lock
 * (on SQLite an exclusive lock on the file) even to find that nothing is to do, which fails while
 * another process (a running server) has the file open. Every start and every CLI run asks this
 * first and needs the engine only when something is pending.
 */

/** How long a read waits while another process holds the SQLite file (an engine applying migrations). */
const SQLITE_BUSY_WAIT_MS = 30_000;

export interface HistoryRow {
  name: string;
  checksum: string;
  finished: boolean;
  rolledBack: boolean;
}

export interface MigrationStatus {
  provider: DbProvider;
  /** Migrations in the folder, oldest first. */
  migrations: string[];
  /** In the folder, not applied to the database. */
  pending: string[];
  /** Applied to the database, missing in the folder. */
  unknown: string[];
  /** Started and not finished (the database needs a manual fix). */
  failed: string[];
  /** Applied, and changed in the folder since. */
  edited: string[];
  upToDate: boolean;
}

/**
 * The history table's rows, oldest first; empty when the database or the table does not exist yet.
 * Only the driver of the URL's database is loaded (every start asks this first; loading `pg` would
 * lengthen a SQLite start for nothing).
 */
export async function readHistory(databaseUrl: string): Promise<HistoryRow[]> {
  return providerOf(databaseUrl) === 'sqlite'
    ? readSqliteHistory(databaseUrl)
    : readPostgresHistory(databaseUrl);
}

const HISTORY_SQL = `SELECT migration_name, checksum,
  CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END AS finished,
  CASE WHEN rolled_back_at IS NULL THEN 0 ELSE 1 END AS rolled_back
  FROM _prisma_migrations ORDER BY started_at, migration_name`;

interface RawRow {
  migration_name: string;
  checksum: string;
  finished: number;
  rolled_back: number;
}

function toRow(raw: RawRow): HistoryRow {
  return {
    name: raw.migration_name,
    checksum: raw.checksum,
    finished: Number(raw.finished) === 1,
    rolledBack: Number(raw.rolled_back) === 1,
  };
}

async function readSqliteHistory(databaseUrl: string): Promise<HistoryRow[]> {
  const file = sqliteFilePath(databaseUrl);
  // Opening a missing file would create it.
  if (!existsSync(file)) return [];
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file, { fileMustExist: true, timeout: SQLITE_BUSY_WAIT_MS });
  try {
    const table = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_prisma_migrations'")
      .get();
    if (table === undefined) return [];
    return (db.prepare(HISTORY_SQL).all() as RawRow[]).map(toRow);
  } catch (error) {
    if (isSqliteBusy(error)) throw databaseInUse();
    throw error;
  } finally {
    db.close();
  }
}

async function readPostgresHistory(databaseUrl: string): Promise<HistoryRow[]> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
  } catch (error) {
    // invalid_catalog_name: the database is created when the migrations are applied.
    if ((error as { code?: string }).code === '3D000') return [];
    throw error;
  }
  try {
    const { rows } = await client.query<RawRow>(HISTORY_SQL);
    return rows.map(toRow);
  } catch (error) {
    // undefined_table: nothing was ever applied.
    if ((error as { code?: string }).code === '42P01') return [];
    throw error;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Compares the history with the folder the way `prisma migrate status` does. */
export function compareHistory(
  provider: DbProvider,
  list: MigrationList,
  rows: HistoryRow[],
): MigrationStatus {
  const migrations = migrationNames(list);
  const scripts = new Map(
    list.migrationDirectories.map((directory) => [
      directory.path,
      directory.migrationFile.content.tag === 'ok' ? directory.migrationFile.content.value : null,
    ]),
  );
  // A rolled-back attempt no longer counts (`prisma migrate resolve --rolled-back`).
  const live = rows.filter((row) => !row.rolledBack);
  const applied = live.filter((row) => row.finished);
  const appliedNames = new Set(applied.map((row) => row.name));
  const failed = unique(
    live.filter((row) => !row.finished && !appliedNames.has(row.name)).map((row) => row.name),
  );
  const pending = migrations.filter((name) => !appliedNames.has(name) && !failed.includes(name));
  const unknown = unique(applied.filter((row) => !scripts.has(row.name)).map((row) => row.name));
  const edited = unique(
    applied
      .filter((row) => {
        const script = scripts.get(row.name);
        return script !== undefined && (script === null || !matchesChecksum(row.name, script, row.checksum));
      })
      .map((row) => row.name),
  );
  const upToDate = [pending, unknown, failed, edited].every((names) => names.length === 0);
  return { provider, migrations, pending, unknown, failed, edited, upToDate };
}

/**
 * Checksums of released migration scripts that were amended in place, by migration: a database that
 * applied the former script is not "edited". Only for amendments that change no schema.
 */
const AMENDED: Readonly<Record<string, readonly string[]>> = {
  // The sandbox role's creation, made to tolerate an ordinary role (docs/security/sql-sandbox.md).
  '20261123122000_stl_sql_views': ['07817b01a5b79a37b4439c491c29a5895e61c13e32a9afd91d86b1b862c14688'],
};

/** Prisma's checksum is the SHA-256 of the script; it accepts the script with other line endings too. */
function matchesChecksum(name: string, script: string, checksum: string): boolean {
  if (AMENDED[name]?.includes(checksum) === true) return true;
  const variants = [script, script.replaceAll('\r\n', '\n'), script.replaceAll(/\r?\n/g, '\r\n')];
  return variants.some((text) => createHash('sha256').update(text, 'utf8').digest('hex') === checksum);
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}

/**
 * A history that applying cannot fix, in one sentence, or undefined. Applying on top of it would
 * run a migration against a schema its author never saw, so nothing is applied.
 */
export function conflictOf(status: MigrationStatus): MigrationError | undefined {
  const list = (names: string[]) => names.join(', ');
  if (status.failed.length > 0) {
    return new MigrationError(
      `migration ${list(status.failed)} failed earlier and is marked unfinished in the database; repair the database by hand, then mark it rolled back`,
    );
  }
  if (status.unknown.length > 0) {
    return new MigrationError(
      `the database has migration ${list(status.unknown)} applied that this version's migrations folder lacks; run the version that applied it, or a newer one`,
    );
  }
  if (status.edited.length > 0) {
    return new MigrationError(
      `migration ${list(status.edited)} was changed after it was applied to the database; restore the applied version of the file`,
    );
  }
  return undefined;
}
