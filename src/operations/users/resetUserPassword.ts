import { resetUserPassword as reset } from '../../domain/users/resetPassword.ts';
import { limitAttempt } from '../attempts.ts';
import type { Handler } from '../types.ts';

export const resetUserPassword: Handler<'resetUserPassword'> = async ({ body }, context) => {
  await limitAttempt(context, 'users', body.account);
  return reset(context.db, body, context.config.accounts);
};
