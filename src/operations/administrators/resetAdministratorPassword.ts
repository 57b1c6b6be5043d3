import { resetAdministratorPassword as reset } from '../../domain/administrators/resetPassword.ts';
import { limitAttempt } from '../../domain/logins/attempts.ts';
import type { Handler } from '../types.ts';

export const resetAdministratorPassword: Handler<'resetAdministratorPassword'> = async (
  { body },
  context,
) => {
  await limitAttempt(context.state, {
    kind: 'administrators',
    account: body.account,
    address: context.clientAddress,
  });
  return reset(context.db, body, context.config.accounts);
};
