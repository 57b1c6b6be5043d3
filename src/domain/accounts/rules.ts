import type { FieldProblem } from '../errors.ts';

/*
 * The rules every way of making or changing an account applies (create-user, update-administrator,
 * the import): docs/design-decisions.md, "Users and administrators" and "Passwords", and the
 * contract's descriptions of createUser and updateAdministrator.
 */

export const ACCOUNT_KINDS = ['users', 'administrators'] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];

/**
 * The values that identify an account, each unique within its kind (users, administrators): login
 * finds an account by any of them. The model declares each `@unique` (test/domain/recordFields).
 */
export const UNIQUE_ACCOUNT_FIELDS = {
  users: ['userName', 'email', 'mobile', 'openId'],
  administrators: ['userName', 'email', 'mobile'],
} as const satisfies Record<AccountKind, readonly string[]>;
export type UniqueAccountField = (typeof UNIQUE_ACCOUNT_FIELDS)[AccountKind][number];

export const USER_NAME_RULE = "must be 1 to 64 characters without spaces, ', :, / or \\";
const USER_NAME = /^[^\s':/\\]{1,64}$/u;

/** Why a user name is refused, or undefined when it is fine. */
export function userNameProblem(name: string): string | undefined {
  return USER_NAME.test(name) ? undefined : USER_NAME_RULE;
}

export interface PasswordRule {
  minLength: number;
  /** At least one letter (any script). */
  letter: boolean;
  /** At least one digit. */
  digit: boolean;
}

/** docs/design-decisions.md, "Passwords": at least 6 characters with a letter and a digit. */
export const DEFAULT_PASSWORD_RULE: PasswordRule = { minLength: 6, letter: true, digit: true };

/** Why a new password (plain text) is refused, or undefined when it is strong enough. */
export function passwordProblem(
  plain: string,
  rule: PasswordRule = DEFAULT_PASSWORD_RULE,
): string | undefined {
  const wants = [...(rule.letter ? ['a letter'] : []), ...(rule.digit ? ['a digit'] : [])];
  const described = `must be at least ${rule.minLength} characters${wants.length ? ` with ${wants.join(' and ')}` : ''}`;
  if ([...plain].length < rule.minLength) return described;
  if (rule.letter && !/\p{L}/u.test(plain)) return described;
  if (rule.digit && !/\p{Nd}/u.test(plain)) return described;
  return undefined;
}

/**
 * E-mail, mobile and openId as stored: trimmed, and "" (none) kept as NULL, so that uniqueness
 * applies to real values only.
 */
export function identifier(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

/** The rule problems of an account's name and new password, named by field. */
export function accountProblems(candidate: { userName?: string; password?: string }, rule?: PasswordRule) {
  const problems: FieldProblem[] = [];
  if (candidate.userName !== undefined) {
    const problem = userNameProblem(candidate.userName);
    if (problem) problems.push({ field: 'userName', message: problem });
  }
  if (candidate.password !== undefined) {
    const problem = passwordProblem(candidate.password, rule);
    if (problem) problems.push({ field: 'password', message: problem });
  }
  return problems;
}
