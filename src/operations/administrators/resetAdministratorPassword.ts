import { resetAdministratorPassword as reset } from '../../domain/administrators/resetPassword.ts';
import { limitAttempt } from '../attempts.ts';
import type { Handler } from '../types.ts';

export const resetAdministratorPassword: Handler<'resetAdministratorPassword'> = async (
  { body },
  context,
) => {
  await limitAttempt(context, 'administrators', body.account);
  return reset(context.db, body, context.config.accounts);
};
