import { tokenSecretOf } from '../../config.ts';
import { loginUser as login } from '../../domain/users/login.ts';
import { limitAttempt } from '../attempts.ts';
import type { Handler } from '../types.ts';

export const loginUser: Handler<'loginUser'> = async ({ body }, context) => {
  await limitAttempt(context, 'users', 'openId' in body ? body.openId : body.account);
  return login(context.db, body, tokenSecretOf(context.config), context.config.accounts);
};
