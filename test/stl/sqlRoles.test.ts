import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import pino from 'pino';
import supertest from 'supertest';
import { runCli } from '../../src/cli/run.ts';
import { composeServices } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate/index.ts';
import { dropDatabase, uniqueDatabaseName, withDatabase } from '../../src/db/migrate/postgres.ts';
import { SandboxUnavailable } from '../../src/db/sandbox/errors.ts';
import { openSandbox, type Sandbox } from '../../src/db/sandbox/index.ts';
import { SANDBOX_ROLE } from '../../src/db/sandbox/postgres.ts';
import { issueApiKey } from '../../src/domain/apiKeys/issueApiKey.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { SYSTEM_ACTOR } from '../../src/domain/events/actor.ts';
import { runSqlContents } from '../../src/domain/stl/sql/sandbox.ts';
import { createApp } from '../../src/http/app.ts';
import type { Services } from '../../src/http/services.ts';
import { testServerUrl } from '../support/database.ts';
import { loadStlFixture } from './fixture.ts';

/*
 * Least privilege for the service itself (docs/security/sql-sandbox.md, "Roles"): on PostgreSQL the
 * service runs as an ordinary role that owns its database, after the operator's one-time step
 * (`cms sandbox-role`) made with a privileged role. A temporary role and database, dropped after.
 */

const server = testServerUrl();

async function cli(databaseUrl: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    argv,
    { out: (line) => out.push(line), err: (line) => err.push(line) },
    { ...process.env, DATABASE_URL: databaseUrl },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function onServer<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/**
 * A fresh database owned by a new ordinary role (no superuser, no role creation): the URL as the
 * server's privileged role and as the ordinary one, and how to remove both.
 */
async function ordinaryRoleDatabase(serverUrl: string, prefix: string) {
  const role = uniqueDatabaseName(prefix);
  const name = uniqueDatabaseName(`${prefix}_db`);
  const privileged = withDatabase(serverUrl, name);
  await onServer(serverUrl, `CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS`);
  await onServer(serverUrl, `CREATE DATABASE ${name} OWNER ${role}`);
  const url = new URL(privileged);
  url.username = role;
  url.password = '';
  return {
    role,
    privileged,
    ordinary: url.toString(),
    async drop() {
      await dropDatabase(serverUrl, name);
      await onServer(serverUrl, `DROP ROLE IF EXISTS ${role}`);
    },
  };
}

test('cms sandbox-role --print shows the SQL of the step, for psql', async () => {
  const { code, out } = await cli('file:./unused.db', 'sandbox-role', 'cms_app', '--print');
  expect(code).toBe(0);
  expect(out).toContain(`CREATE ROLE ${SANDBOX_ROLE} NOLOGIN NOSUPERUSER`);
  expect(out).toContain(`GRANT ${SANDBOX_ROLE} TO "cms_app";`);
  const refused = await cli('file:./unused.db', 'sandbox-role', 'x"; DROP ROLE postgres; --');
  expect([refused.code, refused.err]).toEqual([2, expect.stringContaining('is not a plain role name')]);
});

(server === undefined ? describe.skip : describe)('PostgreSQL: the service as an ordinary role', () => {
  // A skipped describe still runs its body: nothing here may need the server.
  const serverUrl = server ?? '';
  let role: string;
  let privileged: string;
  let ordinary: string;
  let dropRoleDatabase = async (): Promise<void> => undefined;
  let handle: DbHandle | undefined;
  let sandbox: Sandbox | undefined;

  beforeAll(async () => {
    ({
      role,
      privileged,
      ordinary,
      drop: dropRoleDatabase,
    } = await ordinaryRoleDatabase(serverUrl, 'cms_role'));
  });
  afterAll(async () => {
    await sandbox?.close();
    await handle?.db.$disconnect();
    await dropRoleDatabase();
  });

  test('the role cannot take the step itself; the operator takes it once; then the service migrates, writes and runs the sandbox as that role', async () => {
    const [self] = await onServer<{ rolsuper: boolean; rolcreaterole: boolean }>(
      ordinary,
      'SELECT rolsuper, rolcreaterole FROM pg_roles WHERE rolname = current_user',
    );
    expect(self).toEqual({ rolsuper: false, rolcreaterole: false });

    const refused = await cli(ordinary, 'sandbox-role', role);
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(
      'cms sandbox-role: the role of DATABASE_URL may not create or grant roles; run this step with a privileged role (a superuser)',
    );

    const step = await cli(privileged, 'sandbox-role', role);
    expect([step.code, step.err]).toEqual([0, '']);
    expect(step.out).toMatch(
      new RegExp(`^(Created|Kept) the role ${SANDBOX_ROLE}; '${role}' may switch to it`),
    );
    // Run again, it changes nothing and still succeeds.
    expect((await cli(privileged, 'sandbox-role', role)).out).toMatch(/^Kept the role/);
    // The step applied no migrations: the privileged role owns nothing in the service's database.
    expect(await onServer(privileged, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).toEqual(
      [],
    );

    await applyMigrations(ordinary);
    const owners = await onServer<{ tableowner: string }>(
      ordinary,
      "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'",
    );
    expect(owners).toEqual([{ tableowner: role }]);

    handle = await createDb(ordinary);
    await loadStlFixture(handle, new Date());
    const limits = { maxRows: 100, maxBytes: 100_000, timeoutMs: 5000, maxLength: 10_000 };
    sandbox = openSandbox(ordinary);
    expect(
      await runSqlContents(sandbox, 'SELECT id FROM siteserver_Site ORDER BY id', limits, 'test'),
    ).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    // The database wall holds under this role too: a private table is refused by PostgreSQL.
    const walls = { parser: false, database: true, limits: true };
    await expect(runSqlContents(sandbox, 'SELECT * FROM "Site"', limits, 'test', walls)).rejects.toThrow(
      new DomainError(
        'validation',
        'queryString was refused by the database: permission denied for table Site',
      ),
    );

    // Without the membership (the step undone), the sandbox is unavailable (a 503), not the query's fault.
    await onServer(serverUrl, `REVOKE ${SANDBOX_ROLE} FROM ${role}`);
    const missing = runSqlContents(sandbox, 'SELECT id FROM siteserver_Site', limits, 'test');
    await expect(missing).rejects.toBeInstanceOf(SandboxUnavailable);
    await expect(missing).rejects.toThrow(
      `the SQL sandbox's role ${SANDBOX_ROLE} is missing, or this service's role may not switch to it (run \`cms sandbox-role\`)`,
    );
  }, 120_000);
});

(server === undefined ? describe.skip : describe)(
  'PostgreSQL: an ordinary role installs before the step',
  () => {
    const serverUrl = server ?? '';
    let role: string;
    let privileged: string;
    let ordinary: string;
    let dropRoleDatabase = async (): Promise<void> => undefined;
    let services: Services | undefined;

    beforeAll(async () => {
      ({
        role,
        privileged,
        ordinary,
        drop: dropRoleDatabase,
      } = await ordinaryRoleDatabase(serverUrl, 'cms_early'));
    });
    afterAll(async () => {
      await services?.close();
      await dropRoleDatabase();
    });

    test('a fresh install migrates and serves as that role; the sandbox answers 503 until the step, then works', async () => {
      // A role of the server with no way to cms_stl_reader (whether another test made that role or not).
      const [membership] = await onServer<{ member: boolean }>(
        ordinary,
        `SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = '${SANDBOX_ROLE}') AND pg_has_role(current_user, '${SANDBOX_ROLE}', 'MEMBER') AS member`,
      );
      expect(membership).toEqual({ member: false });

      await applyMigrations(ordinary);
      const owners = await onServer<{ tableowner: string }>(
        ordinary,
        "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'",
      );
      expect(owners).toEqual([{ tableowner: role }]);
      // Applied again (a restart), the history is up to date: nothing is refused.
      await applyMigrations(ordinary);
      // A deployment that applied `stl_sql_views` as first released (before its role block was
      // amended) is not refused as edited: a later migration still applies on top of it.
      await onServer(
        ordinary,
        `UPDATE _prisma_migrations SET checksum = '07817b01a5b79a37b4439c491c29a5895e61c13e32a9afd91d86b1b862c14688'
         WHERE migration_name = '20261123122000_stl_sql_views';
         DROP TABLE "UserAvatar";
         DELETE FROM _prisma_migrations WHERE migration_name = '20261126095721_user_avatar'`,
      );
      await applyMigrations(ordinary);
      expect(await onServer(ordinary, `SELECT to_regclass('"UserAvatar"') IS NOT NULL AS made`)).toEqual([
        { made: true },
      ]);

      const config = { ...loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent' }), databaseUrl: ordinary };
      services = await composeServices(config, pino({ level: 'silent' }));
      await loadStlFixture(services, new Date());
      const { key } = await issueApiKey(services.db, { title: 'sandbox', scopes: ['STL'] }, SYSTEM_ACTOR);
      const request = supertest(createApp(services));
      const query = () =>
        request
          .get('/api/v1/stl/sqlContents')
          .query({ queryString: 'SELECT id FROM siteserver_site ORDER BY id' })
          .set('X-SS-API-KEY', key);

      const early = await query();
      expect(early.status).toBe(503);
      // The cause (the role, or the membership, is missing) is logged; the answer names none.
      expect(early.body.detail).toBe('The database is unavailable; retry later');

      // The operator's step, taken after the first start, grants what the migration could not.
      const step = await cli(privileged, 'sandbox-role', role);
      expect([step.code, step.err]).toEqual([0, '']);
      const answered = await query();
      expect([answered.status, answered.body.value]).toEqual([200, [{ id: 1 }, { id: 2 }, { id: 3 }]]);
    }, 120_000);
  },
);
