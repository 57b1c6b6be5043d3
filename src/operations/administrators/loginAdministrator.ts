import { tokenSecretOf } from '../../config.ts';
import { loginAdministrator as login } from '../../domain/administrators/login.ts';
import { guardAttempt } from '../../domain/logins/attempts.ts';
import type { Handler } from '../types.ts';

export const loginAdministrator: Handler<'loginAdministrator'> = ({ body }, context) => {
  const attempt = { kind: 'administrators' as const, account: body.account, address: context.clientAddress };
  return guardAttempt(context.state, context.config.accounts, attempt, () =>
    login(context.db, body, tokenSecretOf(context.config)),
  );
};
