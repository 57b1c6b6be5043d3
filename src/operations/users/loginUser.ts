import { tokenSecretOf } from '../../config.ts';
import { limitAttempt } from '../../domain/logins/attempts.ts';
import { loginUser as login } from '../../domain/users/login.ts';
import type { Handler } from '../types.ts';

export const loginUser: Handler<'loginUser'> = async ({ body }, context) => {
  const account = 'openId' in body ? body.openId : body.account;
  await limitAttempt(context.state, { kind: 'users', account, address: context.clientAddress });
  return login(context.db, body, tokenSecretOf(context.config), context.config.accounts);
};
