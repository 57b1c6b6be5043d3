import type { MigrationList } from '@prisma/schema-engine-wasm/schema_engine_bg';
import { providerOf } from '../client.ts';
import { readMigrations } from './files.ts';
import { compareHistory, conflictOf, type MigrationStatus, readHistory } from './history.ts';
import { migrationsDir } from './model.ts';

/*
 * Whether a database's migrations are all applied, with the plain driver and the migrations folder
 * only. Every start asks this first; the schema engine, its WebAssembly and both Prisma driver
 * adapters (src/db/migrate/index.ts) are loaded only when something is pending.
 */

export interface MigrationsLocation {
  /** Folder that holds prisma/<provider>/migrations; the project root when absent. */
  root?: string;
}

export interface CheckedHistory {
  status: MigrationStatus;
  /** The migrations folder, as the engine takes it. */
  list: MigrationList;
}

/**
 * Compares the database's history with the folder; throws when applying cannot fix the history.
 * An unfinished row seen without the migration lock may be a migration another process is applying
 * at this moment; only under the lock, where nobody else applies, does it mean one that failed.
 */
export async function checkMigrations(
  databaseUrl: string,
  options: MigrationsLocation & { underLock?: boolean } = {},
): Promise<CheckedHistory> {
  const provider = providerOf(databaseUrl);
  const list = await readMigrations(migrationsDir(provider, options.root));
  const status = compareHistory(provider, list, await readHistory(databaseUrl));
  const conflict = conflictOf(options.underLock === true ? status : { ...status, failed: [] });
  if (conflict) throw conflict;
  return { status, list };
}
