/**
 * Errors that domain code raises. They carry no HTTP knowledge: a machine-readable code, a message
 * for the client, and for invalid input the fields at fault, named as the operation's input names
 * them (`title`, `wheres/0/column`) — never where the field sat in a request. src/http maps each
 * code to a status and a problem `type`, and each field to its request location. The message is
 * shown to the client: never put secrets, SQL or stack traces in it.
 */
export const DOMAIN_ERROR_CODES = [
  /** The input breaks a rule (400). */
  'validation',
  /** The input clashes with a record that exists, e.g. a unique name (409). */
  'conflict',
  /** No credentials, or credentials that are not (or no longer) valid (401). */
  'unauthenticated',
  /** A login that failed, for whatever reason; says nothing more (401). */
  'login-failed',
  /** Too many failed logins: the account is locked for a while (401). */
  'locked-out',
  /** A wrong, expired or already used captcha answer (400). */
  'captcha-invalid',
  /** An upload that is not an image the service accepts, judged by its bytes (400). */
  'invalid-image',
  /** An image whose width, height or pixel count is above the limit (422). */
  'image-too-large',
  /** Valid credentials that may not do this (403). */
  'forbidden',
  /** A record the input names does not exist (404). */
  'not-found',
  /** An If-Match the record's current version does not satisfy (412); see PreconditionFailed. */
  'precondition-failed',
  /** Too many attempts of a limited action, e.g. captcha checks per address (429); see RateLimited. */
  'rate-limited',
  /** Something the service needs does not answer, e.g. a readiness probe's database (503, Retry-After). */
  'unavailable',
] as const;
export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/** One field at fault: its name in the operation's input (segments joined by `/`) and what is wrong. */
export interface FieldProblem {
  field: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly fields: readonly FieldProblem[] = [],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** `title must not be empty; wheres/0/column unknown column 'x'`: the message for a list of problems. */
export function describeFields(fields: readonly FieldProblem[]): string {
  return fields.map((problem) => `${problem.field} ${problem.message}`).join('; ');
}

/** Invalid input: every problem at once, with a message that names each field. */
export function invalidFields(fields: readonly FieldProblem[]): DomainError {
  return new DomainError('validation', describeFields(fields), fields);
}

/** Throws when any problem was collected; the usual end of a validation pass. */
export function assertNoProblems(fields: readonly FieldProblem[]): void {
  if (fields.length > 0) throw invalidFields(fields);
}

/** A limited action tried too often; the client may try again after `retryAfterSeconds`. */
export class RateLimited extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('rate-limited', message);
    this.name = 'RateLimited';
  }
}

/** Whole seconds (at least one) until a counter's window ends: the Retry-After of a RateLimited. */
export function secondsUntil(resetAt: Date, now: number): number {
  return Math.max(1, Math.ceil((resetAt.getTime() - now) / 1000));
}

export const invalid = (message: string, fields: readonly FieldProblem[] = []) =>
  new DomainError('validation', message, fields);
export const conflict = (message: string, fields: readonly FieldProblem[] = []) =>
  new DomainError('conflict', message, fields);
export const notFound = (message: string) => new DomainError('not-found', message);
export const unauthenticated = (message: string) => new DomainError('unauthenticated', message);
export const forbidden = (message: string) => new DomainError('forbidden', message);
export const unavailable = (message: string) => new DomainError('unavailable', message);
