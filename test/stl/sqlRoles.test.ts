import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { runCli } from '../../src/cli/run.ts';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate/index.ts';
import { dropDatabase, uniqueDatabaseName, withDatabase } from '../../src/db/migrate/postgres.ts';
import { SandboxUnavailable } from '../../src/db/sandbox/errors.ts';
import { openSandbox, type Sandbox } from '../../src/db/sandbox/index.ts';
import { SANDBOX_ROLE } from '../../src/db/sandbox/postgres.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { runSqlContents } from '../../src/domain/stl/sql/sandbox.ts';
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
  const role = uniqueDatabaseName('cms_role');
  const name = uniqueDatabaseName('cms_role_db');
  let privileged: string;
  let ordinary: string;
  let handle: DbHandle | undefined;
  let sandbox: Sandbox | undefined;

  beforeAll(async () => {
    privileged = withDatabase(serverUrl, name);
    await onServer(serverUrl, `CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS`);
    await onServer(serverUrl, `CREATE DATABASE ${name} OWNER ${role}`);
    const url = new URL(privileged);
    url.username = role;
    url.password = '';
    ordinary = url.toString();
  });
  afterAll(async () => {
    await sandbox?.close();
    await handle?.db.$disconnect();
    await dropDatabase(serverUrl, name);
    await onServer(serverUrl, `DROP ROLE IF EXISTS ${role}`);
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
