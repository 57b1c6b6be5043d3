import { limitAttempt } from '../../domain/logins/attempts.ts';
import { resetUserPassword as reset } from '../../domain/users/resetPassword.ts';
import type { Handler } from '../types.ts';

export const resetUserPassword: Handler<'resetUserPassword'> = async ({ body }, context) => {
  await limitAttempt(context.state, { kind: 'users', account: body.account, address: context.clientAddress });
  return reset(context.db, body, context.config.accounts);
};
