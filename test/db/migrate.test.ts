import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import pg from 'pg';
import { providerOf, sqliteFilePath } from '../../src/db/client.ts';
import {
  applyMigrations,
  checkDrift,
  createMigration,
  MigrationError,
  migrationStatus,
  resetDatabase,
} from '../../src/db/migrate/index.ts';
import { withMigrationLock } from '../../src/db/migrate/lock.ts';
import { migrationsDir, PROJECT_ROOT, providerDir, readBaseModel } from '../../src/db/migrate/model.ts';
import { databaseName } from '../../src/db/migrate/postgres.ts';
import {
  createEmptyDatabase,
  createTestDatabase,
  type EmptyDatabase,
  testServerUrl,
} from '../support/database.ts';
import { scratchPrefix } from '../support/run.ts';

const server = testServerUrl();
const provider = server ? 'postgresql' : 'sqlite';
const providers = [provider] as const;
const modelOptions = { providers, ...(server ? { postgresServerUrl: server } : {}) };

async function tableNames(url: string): Promise<string[]> {
  if (providerOf(url) === 'sqlite') {
    const db = new Database(sqliteFilePath(url), { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .all();
      return (rows as { name: string }[]).map((row) => row.name).sort();
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
    );
    return rows.map((row) => row.tablename).sort();
  } finally {
    await client.end();
  }
}

async function columnNames(url: string, table: string): Promise<string[]> {
  if (providerOf(url) === 'sqlite') {
    const db = new Database(sqliteFilePath(url), { readonly: true });
    try {
      return (db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) => c.name);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ column_name: string }>(
      'SELECT column_name FROM information_schema.columns WHERE table_name = $1',
      [table],
    );
    return rows.map((row) => row.column_name);
  } finally {
    await client.end();
  }
}

/** Every model of prisma/schema.prisma, read from the model itself so that a new model is covered. */
function modelNames(model: string): string[] {
  return [...model.matchAll(/^model (\w+) \{/gm)].map((match) => match[1]!);
}

/** The model with one more column on Site. */
function withExtraField(model: string): string {
  const extended = model.replace(/^model Site \{\n/m, 'model Site {\n  driftProbe String @default("")\n');
  expect(extended).not.toBe(model);
  return extended;
}

describe(`migrations on ${provider}`, () => {
  let model: string;
  let migrations: string[];
  let database: EmptyDatabase;
  let scratch: string;

  beforeAll(async () => {
    model = await readBaseModel();
    migrations = (await readdir(migrationsDir(provider), { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    database = await createEmptyDatabase();
    scratch = await mkdtemp(scratchPrefix('migrations'));
  });

  afterAll(async () => {
    await database?.drop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  test('the committed history starts with init', () => {
    expect(migrations[0]).toMatch(/^\d{14}_init$/);
  });

  test('status of an empty database lists every migration as pending', async () => {
    const status = await migrationStatus(database.url);
    expect(status).toMatchObject({ provider, migrations, pending: migrations, upToDate: false });
  });

  test('deploy onto an empty database applies init and creates every model table', async () => {
    const { applied } = await applyMigrations(database.url);
    expect(applied).toEqual(migrations);
    const tables = await tableNames(database.url);
    expect(tables).toEqual([...modelNames(model), '_prisma_migrations'].sort());
  });

  test('a second deploy applies nothing', async () => {
    expect(await applyMigrations(database.url)).toEqual({ applied: [] });
  });

  test('status reports up to date after deploy', async () => {
    const status = await migrationStatus(database.url);
    expect(status).toEqual({
      provider,
      migrations,
      pending: [],
      unknown: [],
      failed: [],
      edited: [],
      upToDate: true,
    });
  });

  test('drift check passes for the committed migrations', async () => {
    expect(await checkDrift(modelOptions)).toEqual([{ provider, inSync: true, difference: '' }]);
  });

  test('drift check fails against a model with an extra field, naming it', async () => {
    const [report] = await checkDrift({ ...modelOptions, model: withExtraField(model) });
    expect(report).toMatchObject({ provider, inSync: false });
    expect(report!.difference).toMatch(/"Site"/);
    expect(report!.difference).toMatch(/"driftProbe"/);
  });

  test('a new migration for a changed model is pending, then applies, then matches the model', async () => {
    const root = join(scratch, 'changed');
    await cp(join(PROJECT_ROOT, providerDir(provider)), join(root, providerDir(provider)), {
      recursive: true,
    });
    const changed = withExtraField(model);
    const created = await createMigration('drift_probe', { ...modelOptions, model: changed, root });
    expect(created.name).toMatch(/^\d{14}_drift_probe$/);
    expect(created.created).toEqual([{ provider, path: join(migrationsDir(provider, root), created.name!) }]);
    const script = await readFile(join(created.created[0]!.path, 'migration.sql'), 'utf8');
    expect(script).toMatch(/driftProbe/);

    const status = await migrationStatus(database.url, { root });
    expect(status).toMatchObject({ pending: [created.name], upToDate: false });
    expect(await applyMigrations(database.url, { root })).toEqual({ applied: [created.name] });
    expect(await columnNames(database.url, 'Site')).toContain('driftProbe');
    expect(await checkDrift({ ...modelOptions, model: changed, root })).toEqual([
      { provider, inSync: true, difference: '' },
    ]);
    // The database is now ahead of the committed folder.
    expect(await migrationStatus(database.url)).toMatchObject({ unknown: [created.name], upToDate: false });
  });

  test('a migration script runs whole, semicolons in comments and strings included', async () => {
    const root = join(scratch, 'script');
    const dir = migrationsDir(provider, root);
    await cp(migrationsDir(provider), dir, { recursive: true });
    await mkdir(join(dir, '29990101000000_notes'));
    await writeFile(
      join(dir, '29990101000000_notes', 'migration.sql'),
      [
        '-- a note; with a semicolon',
        'CREATE TABLE "Note" ("text" TEXT NOT NULL DEFAULT \'a;b\');',
        'INSERT INTO "Note" ("text") VALUES (\'x;y\');',
        'INSERT INTO "Note" DEFAULT VALUES;',
      ].join('\n'),
    );
    const fresh = await createEmptyDatabase();
    try {
      expect((await applyMigrations(fresh.url, { root })).applied).toContain('29990101000000_notes');
      expect(await tableNames(fresh.url)).toContain('Note');
      await resetDatabase(fresh.url);
    } finally {
      await fresh.drop();
    }
  });

  test('a failing migration is reported with the database error and marked failed', async () => {
    const root = join(scratch, 'failing');
    const dir = migrationsDir(provider, root);
    await cp(migrationsDir(provider), dir, { recursive: true });
    await mkdir(join(dir, '29990101000000_broken'));
    await writeFile(
      join(dir, '29990101000000_broken', 'migration.sql'),
      'INSERT INTO "NoSuchTable" VALUES (1);\n',
    );
    const fresh = await createEmptyDatabase();
    try {
      await expect(applyMigrations(fresh.url, { root })).rejects.toThrow(/NoSuchTable/);
      expect(await migrationStatus(fresh.url, { root })).toMatchObject({
        failed: ['29990101000000_broken'],
        upToDate: false,
      });
    } finally {
      await fresh.drop();
    }
  });

  test('a failed migration stays refused, in one sentence, until someone repairs the database', async () => {
    const root = join(scratch, 'failing-again');
    const dir = migrationsDir(provider, root);
    await cp(migrationsDir(provider), dir, { recursive: true });
    await mkdir(join(dir, '29990101000000_broken'));
    await writeFile(
      join(dir, '29990101000000_broken', 'migration.sql'),
      'INSERT INTO "NoSuchTable" VALUES (1);\n',
    );
    const fresh = await createEmptyDatabase();
    try {
      await expect(applyMigrations(fresh.url, { root })).rejects.toThrow(/NoSuchTable/);
      await expect(applyMigrations(fresh.url, { root })).rejects.toThrow(
        new MigrationError(
          'migration 29990101000000_broken failed earlier and is marked unfinished in the database; repair the database by hand, then mark it rolled back',
        ),
      );
    } finally {
      await fresh.drop();
    }
  });

  test('a migration edited after it was applied is refused before anything runs', async () => {
    const root = join(scratch, 'edited');
    const dir = migrationsDir(provider, root);
    await cp(migrationsDir(provider), dir, { recursive: true });
    await mkdir(join(dir, '29990101000000_notes'));
    const script = join(dir, '29990101000000_notes', 'migration.sql');
    await writeFile(script, 'CREATE TABLE "Note" ("text" TEXT);\n');
    const fresh = await createEmptyDatabase();
    try {
      expect((await applyMigrations(fresh.url, { root })).applied).toContain('29990101000000_notes');
      // Other line endings are the same script to Prisma, and so here.
      await writeFile(script, 'CREATE TABLE "Note" ("text" TEXT);\r\n');
      expect(await applyMigrations(fresh.url, { root })).toEqual({ applied: [] });
      await writeFile(script, 'CREATE TABLE "Note" ("text" TEXT, "more" TEXT);\n');
      expect(await migrationStatus(fresh.url, { root })).toMatchObject({
        edited: ['29990101000000_notes'],
        upToDate: false,
      });
      await expect(applyMigrations(fresh.url, { root })).rejects.toThrow(
        'migration 29990101000000_notes was changed after it was applied to the database; restore the applied version of the file',
      );
    } finally {
      await fresh.drop();
    }
  });

  test('deploys started together: one applies every migration, the others find nothing to do', async () => {
    const fresh = await createEmptyDatabase();
    try {
      const results = await Promise.all([1, 2, 3].map(() => applyMigrations(fresh.url)));
      const applied = results.map((result) => result.applied).sort((a, b) => b.length - a.length);
      expect(applied).toEqual([migrations, [], []]);
      expect(await migrationStatus(fresh.url)).toMatchObject({ upToDate: true });
    } finally {
      await fresh.drop();
    }
  });

  test('reset empties the database', async () => {
    await resetDatabase(database.url);
    if (provider === 'sqlite') expect(existsSync(sqliteFilePath(database.url))).toBe(false);
    else expect(await tableNames(database.url)).toEqual([]);
    expect(await migrationStatus(database.url)).toMatchObject({ pending: migrations, upToDate: false });
  });
});

describe(`the migration lock on ${provider}`, () => {
  let database: EmptyDatabase;
  let holder: ChildProcess | undefined;

  beforeAll(async () => {
    database = await createEmptyDatabase();
    await applyMigrations(database.url);
  });
  afterAll(async () => {
    if (holder && holder.exitCode === null) holder.kill('SIGKILL');
    await database?.drop();
  });

  /** Another process that takes the lock and keeps it until it is killed. */
  async function holdInAnotherProcess(): Promise<ChildProcess> {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `const { withMigrationLock } = await import('./src/db/migrate/lock.ts');
         await withMigrationLock(process.env.DATABASE_URL, () => { console.log('held'); setInterval(() => {}, 1000); return new Promise(() => {}); });`,
      ],
      {
        cwd: PROJECT_ROOT,
        env: { ...process.env, DATABASE_URL: database.url },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('held')) resolve();
      });
      child.on('exit', () => reject(new Error('the lock holder ended early')));
    });
    return child;
  }

  test('a held lock makes others wait, then fail in one sentence; a killed holder leaves no stale lock', async () => {
    holder = await holdInAnotherProcess();
    let ran = false;
    await expect(
      withMigrationLock(
        database.url,
        async () => {
          ran = true;
        },
        300,
      ),
    ).rejects.toThrow(
      'another process has been applying migrations to this database for more than 300 ms; make sure it is not stuck, then try again',
    );
    expect(ran).toBe(false);
    const exited = new Promise((resolve) => holder?.on('exit', resolve));
    holder.kill('SIGKILL');
    await exited;
    expect(await withMigrationLock(database.url, async () => 'mine', 10_000)).toBe('mine');
  });
});

describe('createTestDatabase', () => {
  test('gives a migrated database with a working client, and drop deletes it', async () => {
    const database = await createTestDatabase();
    try {
      expect(database.handle.provider).toBe(provider);
      const site = await database.handle.db.site.create({ data: { siteDir: 'www', siteName: 'Main' } });
      expect(await database.handle.db.site.findUniqueOrThrow({ where: { id: site.id } })).toMatchObject({
        siteDir: 'www',
      });
    } finally {
      await database.drop();
    }
    if (provider === 'sqlite') {
      expect(existsSync(sqliteFilePath(database.url))).toBe(false);
    } else {
      const client = new pg.Client({ connectionString: server });
      await client.connect();
      try {
        const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
          databaseName(database.url),
        ]);
        expect(rowCount).toBe(0);
      } finally {
        await client.end();
      }
    }
  });
});
