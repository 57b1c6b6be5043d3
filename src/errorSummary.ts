/*
 * What a log line may say about an error, for every layer that logs one (the HTTP pipeline, the
 * shared state, the worker): its name, code and one sanitised line — never its stack, statement
 * text, parameters, or a key- or token-shaped string.
 */

export const REDACTED = '[REDACTED]';

/** The service's API keys (src/domain/crypto/apiKeys.ts), even glued to other text. */
export const KEY_LIKE = /cms_[A-Za-z0-9_-]{8,}/g;
const BEARER_LIKE = /\b(Bearer\s+)\S+/gi;
/** Access tokens (compact JWTs, src/domain/crypto/tokens.ts), and anyone else's JWT. */
export const JWT_LIKE = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
// SQL is cut from its first statement keyword on: error texts of drivers echo the statement.
const SQL_TAIL = /\b(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|ALTER|DROP|PRAGMA)\b[\s\S]*/;
const MAX_MESSAGE_LENGTH = 200;

/** One line, no statement text, no key- or token-shaped strings, bounded length. */
export function sanitizeMessage(text: string): string {
  const line =
    text
      .split('\n')
      .map((part) => part.trim())
      // Prisma puts "Invalid `prisma.x.y()` invocation:" and a code frame first, the cause last.
      .filter(
        (part) => part !== '' && !/^Invalid `.*` invocation/.test(part) && !/^(→|\d+\s|at\s)/.test(part),
      )
      .at(-1) ?? '';
  const cleaned = line
    .replace(KEY_LIKE, REDACTED)
    .replace(BEARER_LIKE, `$1${REDACTED}`)
    .replace(JWT_LIKE, REDACTED)
    .replace(SQL_TAIL, '[SQL omitted]');
  return cleaned.length > MAX_MESSAGE_LENGTH ? `${cleaned.slice(0, MAX_MESSAGE_LENGTH)}…` : cleaned;
}

export interface ErrorSummary {
  name: string;
  code?: string;
  message: string;
}

/** What a log line may say about an error: never its stack, query text or parameters. */
export function describeError(error: unknown): ErrorSummary {
  if (typeof error !== 'object' || error === null)
    return { name: typeof error, message: sanitizeMessage(String(error)) };
  const { name, code, message } = error as { name?: unknown; code?: unknown; message?: unknown };
  const summary: ErrorSummary = {
    name: typeof name === 'string' ? name : (error.constructor?.name ?? 'Object'),
    message: typeof message === 'string' ? sanitizeMessage(message) : '',
  };
  if (typeof code === 'string' || typeof code === 'number') summary.code = String(code);
  return summary;
}
