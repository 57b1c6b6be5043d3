/**
 * Errors that domain code raises. They carry no HTTP knowledge beyond a kind; src/http maps each
 * kind to its status and problem+json body. The message is shown to the client: never put secrets,
 * SQL or stack traces in it.
 */
export type DomainErrorKind = 'invalid' | 'unauthenticated' | 'forbidden' | 'not-found' | 'conflict';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    /** Per-field details for `invalid` errors: where in the request, and what is wrong there. */
    readonly errors: { path: string; message: string }[] = [],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalid = (message: string, errors: { path: string; message: string }[] = []) =>
  new DomainError('invalid', message, errors);
export const notFound = (message: string) => new DomainError('not-found', message);
export const unauthenticated = (message: string) => new DomainError('unauthenticated', message);
export const forbidden = (message: string) => new DomainError('forbidden', message);
