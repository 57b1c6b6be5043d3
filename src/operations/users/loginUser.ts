import { tokenSecretOf } from '../../config.ts';
import { guardAttempt } from '../../domain/logins/attempts.ts';
import { loginUser as login } from '../../domain/users/login.ts';
import type { Handler } from '../types.ts';

export const loginUser: Handler<'loginUser'> = ({ body, principal }, context) => {
  const account = 'openId' in body ? body.openId : body.account;
  const policy = context.config.accounts;
  return guardAttempt(context.state, policy, { kind: 'users', account, address: context.clientAddress }, () =>
    login(context.db, body, principal, tokenSecretOf(context.config), policy),
  );
};
