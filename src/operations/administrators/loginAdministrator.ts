import { tokenSecretOf } from '../../config.ts';
import { loginAdministrator as login } from '../../domain/administrators/login.ts';
import { limitAttempt } from '../../domain/logins/attempts.ts';
import type { Handler } from '../types.ts';

export const loginAdministrator: Handler<'loginAdministrator'> = async ({ body }, context) => {
  await limitAttempt(context.state, {
    kind: 'administrators',
    account: body.account,
    address: context.clientAddress,
  });
  return login(context.db, body, tokenSecretOf(context.config), context.config.accounts);
};
