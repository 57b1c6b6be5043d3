import type { FieldProblem } from '../errors.ts';
import { urlProblem } from '../safeText.ts';

/** Something@something.something without spaces: enough to catch a name typed in the wrong field. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/u;

/** A boolean word of the contract (`"true"`/`"false"` in any case, or a JSON boolean). */
export function wordIsTrue(word: string | boolean | undefined, fallback: boolean): boolean {
  if (word === undefined) return fallback;
  return typeof word === 'boolean' ? word : word.toLowerCase() === 'true';
}

/**
 * The rules of a user's free fields, the same for creation and update: an e-mail must look like
 * one, and the avatar's address follows the one URL rule of every stored URL (safeText.ts).
 */
export function userFieldProblems(fields: { email?: string | null; avatarUrl?: string }): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (fields.email != null && fields.email !== '' && !EMAIL.test(fields.email))
    problems.push({ field: 'email', message: 'must be an e-mail address' });
  const avatar = fields.avatarUrl === undefined ? undefined : urlProblem(fields.avatarUrl);
  if (avatar !== undefined) problems.push({ field: 'avatarUrl', message: avatar });
  return problems;
}
