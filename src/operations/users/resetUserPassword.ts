import { guardAttempt } from '../../domain/logins/attempts.ts';
import { resetUserPassword as reset } from '../../domain/users/resetPassword.ts';
import type { Handler } from '../types.ts';

export const resetUserPassword: Handler<'resetUserPassword'> = ({ body }, context) => {
  const policy = context.config.accounts;
  const attempt = { kind: 'users' as const, account: body.account, address: context.clientAddress };
  return guardAttempt(context.state, policy, attempt, () => reset(context.db, body, policy));
};
