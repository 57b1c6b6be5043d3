import pg from 'pg';
import { SANDBOX_ROLE } from './postgres.ts';

/*
 * The operator's one-time step on PostgreSQL (docs/security/sql-sandbox.md, "Roles"): the sandbox's
 * role is made, and the service's role made a member of it, by a role that may do so (a superuser,
 * or one with CREATEROLE that administers the sandbox role). The service itself then needs no such
 * right: its migrations only grant the sandbox role SELECT on the views the service owns (or, when
 * the step comes after the service's first start, the step grants that itself, in the service's
 * database). Made only when missing and granted idempotently, so the step can be run again safely.
 */

/** The SQL of the step, for an operator who prefers psql; `grantee` is the service's role. */
export function sandboxRoleSql(grantee: string): string {
  const quoted = `"${grantee.replaceAll('"', '""')}"`;
  return [
    'DO $$',
    'BEGIN',
    `    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${SANDBOX_ROLE}') THEN`,
    `        CREATE ROLE ${SANDBOX_ROLE} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOBYPASSRLS;`,
    '    END IF;',
    'END',
    '$$;',
    `GRANT ${SANDBOX_ROLE} TO ${quoted};`,
    // Taken after the service's first start, the step grants what the migration could not.
    'DO $$',
    'BEGIN',
    "    IF to_regclass('public.siteserver_site') IS NOT NULL THEN",
    `        GRANT USAGE ON SCHEMA public TO ${SANDBOX_ROLE};`,
    `        GRANT SELECT ON public.siteserver_site, public.siteserver_channel, public.siteserver_content TO ${SANDBOX_ROLE};`,
    '    END IF;',
    'END',
    '$$;',
  ].join('\n');
}

export type SandboxRoleOutcome =
  | { status: 'done'; created: boolean }
  /** The grantee does not exist on the server. */
  | { status: 'no-grantee' }
  /** The sandbox role exists with rights it must not have (it could log in, or is a superuser). */
  | { status: 'unsafe-role' }
  /** The role of the URL may not create or grant roles. */
  | { status: 'not-privileged' };

/** Runs the step on the server of `privilegedUrl` for the role `grantee`. */
export async function ensureSandboxRole(privilegedUrl: string, grantee: string): Promise<SandboxRoleOutcome> {
  const client = new pg.Client({ connectionString: privilegedUrl });
  await client.connect();
  try {
    const grantees = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [grantee]);
    if (grantees.rowCount === 0) return { status: 'no-grantee' };
    const existing = await client.query<{ unsafe: boolean }>(
      'SELECT rolsuper OR rolcanlogin OR rolbypassrls OR rolcreaterole OR rolcreatedb AS unsafe FROM pg_roles WHERE rolname = $1',
      [SANDBOX_ROLE],
    );
    if (existing.rows[0]?.unsafe === true) return { status: 'unsafe-role' };
    try {
      await client.query(sandboxRoleSql(grantee));
    } catch (error) {
      // insufficient_privilege: CREATE ROLE or GRANT refused to this role.
      if ((error as { code?: unknown }).code === '42501') return { status: 'not-privileged' };
      throw error;
    }
    return { status: 'done', created: existing.rowCount === 0 };
  } finally {
    await client.end();
  }
}
