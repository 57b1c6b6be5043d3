import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from '@jest/globals';
import { createDb } from '../../src/db/client.ts';
import { applyMigrations, MigrationError } from '../../src/db/migrate/index.ts';
import { migrationsDir } from '../../src/db/migrate/model.ts';
import { createEmptyDatabase, type EmptyDatabase, testServerUrl } from '../support/database.ts';
import { scratchPrefix } from '../support/run.ts';
import {
  bootstrapKeyOf,
  freePort,
  post,
  runScript,
  type Service,
  startService,
  stopService,
} from './processes.ts';

/*
 * Several processes on one database, as in everyday use: the CLI and `db:migrate` next to a running
 * server, a second server (or a supervisor's workers) on the same database. A process whose
 * migrations are applied must not need the migration engine (nor its lock); the first start
 * migrates and seeds exactly once.
 */

const provider = testServerUrl() ? 'postgresql' : 'sqlite';

let database: EmptyDatabase | undefined;
let services: Service[] = [];
let scratch: string | undefined;

afterEach(async () => {
  await Promise.all(services.map(stopService));
  services = [];
  await database?.drop();
  database = undefined;
  if (scratch) await rm(scratch, { recursive: true, force: true });
  scratch = undefined;
});

async function serve(env: Record<string, string>): Promise<{ service: Service; port: number }> {
  const port = await freePort();
  const service = startService({ ...env, PORT: String(port) });
  services.push(service);
  return { service, port };
}

const LISTENING = /"msg":"listening"/;

async function contentsTotal(port: number, key: string): Promise<unknown> {
  const answer = await post(port, '/api/v1/contents', { siteId: 1, perPage: 1 }, { 'X-SS-API-KEY': key });
  expect(answer.status).toBe(200);
  return (answer.json as { totalCount?: unknown }).totalCount;
}

describe(`several processes on one ${provider} database`, () => {
  test('the CLI, db:migrate and a second server work next to a running server', async () => {
    database = await createEmptyDatabase();
    const env = { DATABASE_URL: database.url };
    const first = await serve({ ...env, SEED_DEMO: 'true' });
    await first.service.waitFor(LISTENING);
    expect(bootstrapKeyOf(first.service.output())).toBeDefined();

    const created = await runScript(
      'src/cli/main.ts',
      ['apikey', 'create', '--title', 'ops', '--scopes', 'Contents'],
      env,
    );
    expect(created).toMatchObject({ code: 0, stderr: expect.stringContaining('API key 2 "ops"') });
    const key = created.stdout.trim();
    expect(key).toMatch(/^cms_[\w-]{43}$/);
    expect(await contentsTotal(first.port, key)).toBe(40);

    const deploy = await runScript('scripts/db.ts', ['deploy'], env);
    expect(deploy).toMatchObject({ code: 0, stdout: expect.stringContaining('no pending migration') });
    const status = await runScript('scripts/db.ts', ['status'], env);
    expect(status).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('database schema is up to date'),
    });

    const second = await serve({ ...env, SEED_DEMO: 'true' });
    await second.service.waitFor(LISTENING);
    expect(second.service.output()).not.toContain('applied');
    expect(bootstrapKeyOf(second.service.output())).toBeUndefined();
    expect(await contentsTotal(second.port, key)).toBe(40);
    // The first one still answers, with a key the CLI wrote while it ran.
    expect(await contentsTotal(first.port, key)).toBe(40);
  });

  test('two servers started together on an empty database: one migrates and seeds, both answer', async () => {
    database = await createEmptyDatabase();
    const env = { DATABASE_URL: database.url, SEED_DEMO: 'true' };
    const [a, b] = await Promise.all([serve(env), serve(env)]);
    await Promise.all([a.service.waitFor(LISTENING), b.service.waitFor(LISTENING)]);
    const keys = [a, b].map(({ service }) => bootstrapKeyOf(service.output()));
    const printed = keys.filter((key) => key !== undefined);
    expect(printed).toHaveLength(1);
    const key = printed[0] as string;
    expect(await contentsTotal(a.port, key)).toBe(40);
    expect(await contentsTotal(b.port, key)).toBe(40);
    const { db } = await createDb(database.url);
    try {
      expect([await db.site.count(), await db.apiKey.count(), await db.administrator.count()]).toEqual([
        1, 1, 1,
      ]);
    } finally {
      await db.$disconnect();
    }
  });

  test('an Idempotency-Key used on one server is honoured by another and after a restart', async () => {
    database = await createEmptyDatabase();
    // One process each (no supervisor): the shared state is the database they share.
    const env = { DATABASE_URL: database.url, SEED_DEMO: 'true', WORKERS: '0' };
    const first = await serve(env);
    await first.service.waitFor(LISTENING);
    const key = bootstrapKeyOf(first.service.output()) as string;
    const headers = { 'X-SS-API-KEY': key, 'Idempotency-Key': 'process-test-key-1' };
    const body = { title: 'made once', scopes: ['Contents'] };
    const created = await post(first.port, '/api/v1/apiKeys', body, headers);
    expect(created.status).toBe(201);
    const issued = created.json as { key: string; apiKey: { id: number } };

    const second = await serve(env);
    await second.service.waitFor(LISTENING);
    const fromSecond = await post(second.port, '/api/v1/apiKeys', body, headers);
    expect(fromSecond).toEqual({ status: 201, json: issued });
    const other = await post(second.port, '/api/v1/apiKeys', { ...body, title: 'another' }, headers);
    expect(other.status).toBe(422);

    await stopService(first.service);
    await stopService(second.service);
    const restarted = await serve(env);
    await restarted.service.waitFor(LISTENING);
    expect(await post(restarted.port, '/api/v1/apiKeys', body, headers)).toEqual({
      status: 201,
      json: issued,
    });
    const { db } = await createDb(database.url);
    try {
      expect(await db.apiKey.count({ where: { title: 'made once' } })).toBe(1);
    } finally {
      await db.$disconnect();
    }
  });

  test('a history the folder cannot explain stops the start and db:migrate in one sentence', async () => {
    database = await createEmptyDatabase();
    await applyMigrations(database.url);
    const { db } = await createDb(database.url);
    try {
      // What a newer version would have left behind.
      await db.$executeRawUnsafe(
        `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
         VALUES ('newer', 'abc', '29990101000000_from_the_future', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 1)`,
      );
    } finally {
      await db.$disconnect();
    }
    const sentence =
      "the database has migration 29990101000000_from_the_future applied that this version's migrations folder lacks";
    const deploy = await runScript('scripts/db.ts', ['deploy'], { DATABASE_URL: database.url });
    expect(deploy.code).toBe(1);
    expect(deploy.stderr).toContain(sentence);
    expect(deploy.stderr.trim().split('\n')).toHaveLength(1);

    const { service } = await serve({ DATABASE_URL: database.url });
    expect(await service.exited).toBe(1);
    expect(service.output()).toContain(`Could not start: ${sentence}`);
    expect(service.output()).not.toMatch(/WASM|wasm-function/);
  });
});

// On PostgreSQL a running server holds no lock that migrations need.
(provider === 'sqlite' ? describe : describe.skip)('a SQLite file held by a running server', () => {
  test('a pending migration is refused in one sentence, not with an engine dump', async () => {
    database = await createEmptyDatabase();
    const { service } = await serve({ DATABASE_URL: database.url });
    await service.waitFor(LISTENING);
    // This version plus one migration: what the next release would bring.
    scratch = await mkdtemp(scratchPrefix('next'));
    const dir = migrationsDir('sqlite', scratch);
    await cp(migrationsDir('sqlite'), dir, { recursive: true });
    await mkdir(join(dir, '29990101000000_next'));
    await writeFile(
      join(dir, '29990101000000_next', 'migration.sql'),
      'CREATE TABLE "Next" ("id" INTEGER);\n',
    );

    const failure = await applyMigrations(database.url, { root: scratch }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(MigrationError);
    expect((failure as Error).message).toBe(
      'the database is locked by another process (a running server or migration); stop it, then apply the migrations with `npm run db:migrate`',
    );
    // Once the server is gone, the same call applies it.
    await stopService(service);
    expect(await applyMigrations(database.url, { root: scratch })).toEqual({
      applied: ['29990101000000_next'],
    });
  });
});
