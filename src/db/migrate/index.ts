import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type {
  CreateMigrationOutput,
  MigrationList,
  SchemaEngine,
} from '@prisma/schema-engine-wasm/schema_engine_bg';
import { type DbProvider, providerOf, sqliteFilePath } from '../client.ts';
import { engineConnection } from './adapters.ts';
import { checkMigrations, type MigrationsLocation } from './check.ts';
import { type Datamodel, MigrationError, NO_FILTER, withEngine } from './engine.ts';
import { readMigrations, writeMigration } from './files.ts';
import { compareHistory, type MigrationStatus, readHistory } from './history.ts';
import { migrationLockFile, withMigrationLock } from './lock.ts';
import { migrationsDir, PROVIDERS, providerDir, readBaseModel, renderProviderSchema } from './model.ts';
import {
  createDatabase,
  dropDatabase,
  ensureDatabase,
  migrationServerUrl,
  uniqueDatabaseName,
  withDatabase,
} from './postgres.ts';

export type { MigrationsLocation } from './check.ts';
export { MigrationError } from './errors.ts';
export type { MigrationStatus } from './history.ts';
export { PROJECT_ROOT, PROVIDERS, renderProviderSchema } from './model.ts';

export interface ModelOptions extends MigrationsLocation {
  /** Model text in the form of prisma/schema.prisma (provider written as PROVIDER); that file when absent. */
  model?: string;
  /** Providers to work on; both when absent. */
  providers?: readonly DbProvider[];
  /** PostgreSQL server for temporary databases; MIGRATION_POSTGRES_URL or the local server when absent. */
  postgresServerUrl?: string;
}

export interface CreatedMigration {
  /** `<timestamp>_<name>`, shared by all providers; null when the model has no change to migrate. */
  name: string | null;
  created: { provider: DbProvider; path: string }[];
}

export interface DriftReport {
  provider: DbProvider;
  inSync: boolean;
  /** SQL that would take a database built by the migrations to the model; empty when in sync. */
  difference: string;
}

/**
 * Applies pending migrations (creating the database, or a SQLite file's folder, when missing).
 *
 * The history is read first without the engine: a process whose migrations are all applied, such
 * as a second server or the CLI next to a running server, neither locks nor waits. Otherwise one
 * process at a time takes the migration lock, reads the history again (another may have applied
 * everything meanwhile) and runs the engine. A history that applying cannot fix is refused in one
 * sentence before anything runs.
 */
export async function applyMigrations(
  databaseUrl: string,
  options: MigrationsLocation = {},
): Promise<{ applied: string[] }> {
  const provider = providerOf(databaseUrl);
  const { status, list } = await checkMigrations(databaseUrl, options);
  if (status.upToDate) return { applied: [] };
  if (provider === 'sqlite') await mkdir(dirname(sqliteFilePath(databaseUrl)), { recursive: true });
  else await ensureDatabase(databaseUrl);
  return withMigrationLock(databaseUrl, async () => {
    if ((await checkMigrations(databaseUrl, { ...options, underLock: true })).status.upToDate) {
      return { applied: [] };
    }
    const output = await withEngine(engineConnection(databaseUrl), await committedModel(provider), (engine) =>
      engine.applyMigrations({ migrationsList: list, filters: NO_FILTER }),
    );
    return { applied: output.appliedMigrationNames };
  });
}

/** Compares the database's history with the migrations folder, without the engine or any lock. */
export async function migrationStatus(
  databaseUrl: string,
  options: MigrationsLocation = {},
): Promise<MigrationStatus> {
  const provider = providerOf(databaseUrl);
  const list = await readMigrations(migrationsDir(provider, options.root));
  return compareHistory(provider, list, await readHistory(databaseUrl));
}

/**
 * Creates `<timestamp>_<name>/migration.sql` for each provider from the difference between its
 * migrations and the model, like `prisma migrate dev --create-only`, on a temporary database.
 */
export async function createMigration(name: string, options: ModelOptions = {}): Promise<CreatedMigration> {
  if (!/^[A-Za-z0-9_]+$/.test(name)) {
    throw new MigrationError(`migration name "${name}": use letters, digits and underscores only`);
  }
  const base = options.model ?? (await readBaseModel());
  const scripts: { provider: DbProvider; dir: string; output: CreateMigrationOutput }[] = [];
  for (const provider of options.providers ?? PROVIDERS) {
    const dir = migrationsDir(provider, options.root);
    const list = await readMigrations(dir);
    const datamodel = modelFor(provider, base);
    const output = await onTemporaryDatabase(provider, options, (url) =>
      withEngine(engineConnection(url), datamodel, async (engine) => {
        await engine.applyMigrations({ migrationsList: list, filters: NO_FILTER });
        await requireCleanHistory(engine, list);
        return engine.createMigration({
          draft: false,
          migrationName: name,
          migrationsList: list,
          schema: { files: [datamodel] },
          filters: NO_FILTER,
        });
      }),
    );
    scripts.push({ provider, dir, output });
  }
  // Written only once every provider has its script, so that a failure leaves no provider ahead.
  let folderName: string | null = null;
  const created: CreatedMigration['created'] = [];
  for (const { provider, dir, output } of scripts) {
    if (output.migrationScript === null) continue;
    // One name for all providers, so that the histories read alike.
    folderName ??= output.generatedMigrationName;
    const path = await writeMigration(dir, folderName, output.migrationScript, output.connectorType);
    created.push({ provider, path });
  }
  return { name: folderName, created };
}

/** Compares, per provider, the schema the migrations build with the model. */
export async function checkDrift(options: ModelOptions = {}): Promise<DriftReport[]> {
  const base = options.model ?? (await readBaseModel());
  const reports: DriftReport[] = [];
  for (const provider of options.providers ?? PROVIDERS) {
    const list = await readMigrations(migrationsDir(provider, options.root));
    const datamodel = modelFor(provider, base);
    // The migrations are replayed on a shadow database beside this one.
    const url = provider === 'sqlite' ? 'file::memory:' : (options.postgresServerUrl ?? migrationServerUrl());
    const output = await withEngine(engineConnection(url), datamodel, (engine) =>
      engine.diff({
        from: { tag: 'migrations', ...list },
        to: { tag: 'schemaDatamodel', files: [datamodel] },
        script: true,
        exitCode: true,
        filters: NO_FILTER,
      }),
    );
    const inSync = output.exitCode === 0;
    reports.push({ provider, inSync, difference: inSync ? '' : (output.stdout ?? '').trim() });
  }
  return reports;
}

/** Empties the database: deletes a SQLite file (the engine's reset only empties its tables). */
export async function resetDatabase(databaseUrl: string): Promise<void> {
  const provider = providerOf(databaseUrl);
  if (provider === 'sqlite') {
    const file = sqliteFilePath(databaseUrl);
    await Promise.all(
      ['', '-wal', '-shm', '-journal'].map((suffix) => rm(`${file}${suffix}`, { force: true })),
    );
    await rm(migrationLockFile(databaseUrl), { force: true });
    return;
  }
  await withEngine(engineConnection(databaseUrl), await committedModel(provider), (engine) =>
    engine.reset({ filter: NO_FILTER }),
  );
}

function modelFor(provider: DbProvider, base: string): Datamodel {
  return { path: `${providerDir(provider)}/schema.prisma`, content: renderProviderSchema(base, provider) };
}

async function committedModel(provider: DbProvider): Promise<Datamodel> {
  return modelFor(provider, await readBaseModel());
}

async function requireCleanHistory(engine: SchemaEngine, list: MigrationList): Promise<void> {
  const { action } = await engine.devDiagnostic({ migrationsList: list, filters: NO_FILTER });
  if (action.tag === 'reset') {
    throw new MigrationError(`the migrations folder cannot be replayed: ${action.reason}`);
  }
}

async function onTemporaryDatabase<T>(
  provider: DbProvider,
  options: ModelOptions,
  work: (databaseUrl: string) => Promise<T>,
): Promise<T> {
  if (provider === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'cms-migrate-'));
    try {
      return await work(`file:${join(dir, 'dev.db')}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const server = options.postgresServerUrl ?? migrationServerUrl();
  const name = uniqueDatabaseName('cms_migrate');
  await createDatabase(server, name);
  try {
    return await work(withDatabase(server, name));
  } finally {
    await dropDatabase(server, name);
  }
}
