import { resetAdministratorPassword as reset } from '../../domain/administrators/resetPassword.ts';
import { guardAttempt } from '../../domain/logins/attempts.ts';
import type { Handler } from '../types.ts';

export const resetAdministratorPassword: Handler<'resetAdministratorPassword'> = ({ body }, context) => {
  const policy = context.config.accounts;
  const attempt = { kind: 'administrators' as const, account: body.account, address: context.clientAddress };
  return guardAttempt(context.state, policy, attempt, () => reset(context.db, body, policy));
};
