import { ipKeyGenerator } from 'express-rate-limit';
import type { AccountKind } from '../domain/accounts/rules.ts';
import { countAttempt } from '../domain/logins/attempts.ts';
import { ProblemError, problem } from '../http/problem.ts';
import type { OperationContext } from './types.ts';

/**
 * Counts a login or password-change attempt against its account and the caller's address (grouped
 * as the service's rate limiter groups addresses: an IPv6 /56 is one address). Over either limit
 * the operation answers 429 with Retry-After, before any password is checked.
 */
export async function limitAttempt(
  context: Pick<OperationContext, 'state' | 'clientAddress'>,
  kind: AccountKind,
  account: string,
): Promise<void> {
  const address = ipKeyGenerator(context.clientAddress);
  const retryAfter = await countAttempt(context.state, { kind, account, address });
  if (retryAfter === undefined) return;
  throw new ProblemError(
    problem(429, `Too many login or password attempts; retry in ${retryAfter} seconds`),
    { 'Retry-After': String(retryAfter) },
  );
}
