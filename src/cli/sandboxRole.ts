import { providerOf } from '../db/client.ts';
import { SANDBOX_ROLE } from '../db/sandbox/postgres.ts';
import { ensureSandboxRole, sandboxRoleSql } from '../db/sandbox/role.ts';
import type { StandaloneCommand } from './commands.ts';
import { CommandFailure, parseOptions, UsageError } from './options.ts';

/*
 * `cms sandbox-role ROLE`: the operator's one-time step on PostgreSQL, run with a privileged role's
 * DATABASE_URL (src/db/sandbox/role.ts). It applies no migrations: the privileged role must not end
 * up owning the service's tables.
 */

const ROLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export const sandboxRoleCommand: StandaloneCommand = {
  name: 'sandbox-role',
  usage: 'cms sandbox-role ROLE [--print]',
  summary: `PostgreSQL, once, with a privileged DATABASE_URL: create the SQL sandbox's role ${SANDBOX_ROLE} and let ROLE (the service's own, ordinary role) switch to it. --print shows the SQL instead.`,
  standalone: true,
  async prepare(args) {
    const { positionals, values } = parseOptions(args, { print: { type: 'boolean' } }, 1);
    const role = positionals[0];
    if (!role) throw new UsageError("name the service's database role");
    if (!ROLE_NAME.test(role)) throw new UsageError(`'${role}' is not a plain role name`);
    return async ({ config, out }) => {
      if (values.print === true) {
        out(sandboxRoleSql(role));
        return 0;
      }
      if (providerOf(config.databaseUrl) !== 'postgresql') {
        out('SQLite has no roles: the SQL sandbox needs no setup there.');
        return 0;
      }
      const outcome = await ensureSandboxRole(config.databaseUrl, role);
      if (outcome.status === 'no-grantee')
        throw new CommandFailure(`there is no role '${role}' on this server`);
      if (outcome.status === 'not-privileged') {
        throw new CommandFailure(
          'the role of DATABASE_URL may not create or grant roles; run this step with a privileged role (a superuser)',
        );
      }
      if (outcome.status === 'unsafe-role') {
        throw new CommandFailure(
          `the role ${SANDBOX_ROLE} exists with rights it must not have (login, superuser, create role or database, bypass RLS); fix it by hand`,
        );
      }
      out(
        `${outcome.created ? 'Created' : 'Kept'} the role ${SANDBOX_ROLE}; '${role}' may switch to it. The service may now run as '${role}'.`,
      );
      return 0;
    };
  },
};
