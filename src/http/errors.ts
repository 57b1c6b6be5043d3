import type { ErrorRequestHandler, Request } from 'express';
import { error as validatorErrors } from 'express-openapi-validator';
import type { Logger } from 'pino';
import type { Contract, ContractOperation } from '../contract.ts';
import {
  isDatabaseBusy,
  isDatabaseUnavailable,
  isStatementTimeLimit,
  isUniqueViolation,
  isWriteConflict,
} from '../db/databaseErrors.ts';
import { DomainError, type DomainErrorCode, type FieldProblem, RateLimited } from '../domain/errors.ts';
import { PreconditionFailed } from '../domain/versions.ts';
import { SharedStateUnavailable } from '../state/port.ts';
import { WWW_AUTHENTICATE } from './auth.ts';
import { notJsonBody, tooLargeBody, unreadableBody, unsupportedMediaType } from './bodies.ts';
import { describeError, redactSecretShapes } from './logging.ts';
import {
  type FieldError,
  type Problem,
  ProblemError,
  type ProblemKind,
  problem,
  RETRY_AFTER_SECONDS,
  sendProblem,
  serviceUnavailable,
} from './problem.ts';

/*
 * The one place an error becomes a response. Whatever is thrown, the client gets problem+json,
 * and only text written for clients (domain messages, contract violations) reaches it; anything
 * unexpected is a bare 500, logged by name, code and a sanitised line.
 */

interface Mapped {
  body: Problem;
  headers?: Record<string, string>;
  /** Set when the error is ours, not the client's, and must be logged. */
  unexpected?: boolean;
}

const DOMAIN_PROBLEMS: Record<DomainErrorCode, { status: number; kind: ProblemKind }> = {
  validation: { status: 400, kind: 'validation' },
  conflict: { status: 409, kind: 'conflict' },
  'captcha-invalid': { status: 400, kind: 'captcha-invalid' },
  'invalid-image': { status: 400, kind: 'invalid-image' },
  'image-too-large': { status: 422, kind: 'image-too-large' },
  unauthenticated: { status: 401, kind: 'unauthorized' },
  'login-failed': { status: 401, kind: 'login-failed' },
  'locked-out': { status: 401, kind: 'locked-out' },
  forbidden: { status: 403, kind: 'forbidden' },
  'not-found': { status: 404, kind: 'not-found' },
  'precondition-failed': { status: 412, kind: 'precondition-failed' },
  'rate-limited': { status: 429, kind: 'rate-limited' },
  unavailable: { status: 503, kind: 'service-unavailable' },
};

/**
 * Where a field of the operation's input sat in the request: a declared parameter is found under
 * its location (`/query/siteId`, `/path/id`), anything else in the body. Domain code names fields
 * only, so the same rule serves an operation that takes its input from the query string.
 */
export function locateField(field: string, operation: ContractOperation | undefined): string {
  const name = field.split('/')[0] ?? field;
  const location = operation?.parameters.get(name) ?? (operation?.hasBody === false ? 'query' : 'body');
  return `/${location}/${field}`;
}

function fromDomain(error: DomainError, operation: ContractOperation | undefined): Mapped {
  const { status, kind } = DOMAIN_PROBLEMS[error.code];
  const errors = error.fields.map((problem: FieldProblem) => ({
    path: locateField(problem.field, operation),
    message: problem.message,
  }));
  const body = problem(status, error.message, { kind, errors });
  if (error instanceof RateLimited)
    return { body, headers: { 'Retry-After': String(error.retryAfterSeconds) } };
  if (error instanceof PreconditionFailed) return { body, headers: { ETag: error.currentETag } };
  if (error.code === 'unavailable') return { body, headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } };
  return { body };
}

type ValidatorError = InstanceType<(typeof validatorErrors)[keyof typeof validatorErrors]>;

function isValidatorError(error: unknown): error is ValidatorError {
  return Object.values(validatorErrors).some((type) => error instanceof type);
}

/**
 * The validator reports an unknown body field as "must NOT have additional properties", and path
 * parameters under /params; the contract documents /path (as in OpenAPI's `in: path`).
 */
function fieldErrors(errors: ValidatorError['errors']): FieldError[] {
  return errors.map(({ path: reported, message, errorCode }) => {
    const path = (reported ?? '').replace(/^\/params\//, '/path/');
    const field = path.split('/').at(-1) ?? path;
    const unknownField =
      errorCode?.startsWith('additionalProperties') || errorCode?.startsWith('unevaluated');
    if (unknownField && path.startsWith('/body')) return { path, message: `unknown field '${field}'` };
    return { path, message: message ?? 'is invalid' };
  });
}

/** The path as an answer repeats it: a secret a client put in it is not sent back (src/http/logging.ts). */
function shownPath(req: Request): string {
  return redactSecretShapes(req.path);
}

function fromValidator(error: ValidatorError, req: Request, nodeEnv: string): Mapped {
  switch (error.status) {
    case 400: {
      const errors = fieldErrors(error.errors);
      const summary = errors.map((e) => `${e.path} ${e.message}`).join('; ');
      return {
        body: problem(400, `The request does not match the contract: ${summary}`, {
          kind: 'validation',
          errors,
        }),
      };
    }
    case 404:
      return { body: problem(404, `There is no operation at ${req.method} ${shownPath(req)}`) };
    case 405: {
      const allow = error.headers?.Allow ?? '';
      return {
        body: problem(405, `${req.method} is not allowed on ${shownPath(req)}; allowed: ${allow}`),
        headers: { Allow: allow },
      };
    }
    case 413:
      return { body: problem(413, error.message) };
    case 415:
      return { body: unsupportedMediaType(req.headers['content-type']).problem };
    default: {
      // A response that breaks the contract: outside production the fields are named so the drift
      // gets fixed (response validation is off in production). Any other 500 says nothing.
      const drift = fieldErrors(error.errors).filter((e) => e.path.startsWith('/response'));
      const detail =
        nodeEnv === 'production' || drift.length === 0
          ? 'Internal Server Error'
          : `The response does not match the contract: ${drift.map((e) => `${e.path} ${e.message}`).join('; ')}`;
      return { body: problem(500, detail, { kind: 'internal' }), unexpected: true };
    }
  }
}

/**
 * Errors raised by express.json (body-parser), which reads the bodies src/http/bodies.ts does not
 * read itself (compressed, in another charset…): the same answers as that reader's.
 */
function fromBodyParser(error: unknown): Mapped | undefined {
  const { type, status, expose } = error as { type?: unknown; status?: unknown; expose?: unknown };
  // The parser's own message quotes the body, which may hold a password.
  if (type === 'entity.parse.failed') return { body: notJsonBody() };
  if (type === 'entity.too.large') return { body: tooLargeBody() };
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return { body: problem(415, 'The request body uses an unsupported encoding or charset') };
  }
  if (typeof status === 'number' && status >= 400 && status < 500 && expose === true) {
    return { body: unreadableBody(status) };
  }
  return undefined;
}

type OperationRequest = Request & { openapi?: { schema?: { operationId?: string } } };

function operationOf(req: Request, contract: Contract): ContractOperation | undefined {
  const operationId = (req as OperationRequest).openapi?.schema?.operationId;
  return operationId === undefined ? undefined : contract.byId.get(operationId);
}

export function mapError(error: unknown, req: Request, nodeEnv: string, contract: Contract): Mapped {
  if (error instanceof ProblemError) return { body: error.problem, headers: error.headers };
  if (error instanceof DomainError) return fromDomain(error, operationOf(req, contract));
  if (isValidatorError(error)) return fromValidator(error, req, nodeEnv);
  // The router could not percent-decode a path parameter (`/captcha/%`).
  if (error instanceof URIError) return { body: problem(400, 'The path holds invalid percent-encoding') };
  const parsing = fromBodyParser(error);
  if (parsing !== undefined) return parsing;
  if (isUniqueViolation(error)) {
    return { body: problem(409, 'A record with the same unique value already exists', { kind: 'conflict' }) };
  }
  if (error instanceof SharedStateUnavailable) {
    // A single-use mark that cannot be checked is refused rather than risked (src/state/failPolicy.ts).
    const unavailable = serviceUnavailable('State shared between nodes is unavailable; retry later');
    return { body: unavailable.problem, headers: unavailable.headers, unexpected: true };
  }
  if (isStatementTimeLimit(error)) {
    // Not the client's fault alone (the same filter is quick on a smaller site or a quieter node),
    // so a 503 with Retry-After, whose detail says how to make the query cheaper.
    const limited = serviceUnavailable(
      'The query ran past the time the database allows; narrow the filter (fewer or more selective Like rules) or retry later',
    );
    return { body: limited.problem, headers: limited.headers, unexpected: true };
  }
  if (isWriteConflict(error)) {
    const conflict = serviceUnavailable('A concurrent write got in the way and nothing was written; retry');
    return { body: conflict.problem, headers: conflict.headers, unexpected: true };
  }
  if (isDatabaseBusy(error)) {
    const busy = serviceUnavailable('The database is busy with other writes; retry later');
    return { body: busy.problem, headers: busy.headers, unexpected: true };
  }
  if (isDatabaseUnavailable(error)) {
    const unavailable = serviceUnavailable('The database is unavailable; retry later');
    return { body: unavailable.problem, headers: unavailable.headers, unexpected: true };
  }
  return { body: problem(500, 'Internal Server Error', { kind: 'internal' }), unexpected: true };
}

export function errorHandler(logger: Logger, nodeEnv: string, contract: Contract): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const log = req.log ?? logger;
    const mapped = mapError(error, req, nodeEnv, contract);
    if (mapped.unexpected) {
      const level = mapped.body.status === 503 ? 'warn' : 'error';
      log[level]({ err: describeError(error) }, `${mapped.body.status} ${mapped.body.title}`);
    }
    if (res.headersSent) {
      // Part of a response is out: nothing valid can follow, so the connection is cut.
      res.destroy();
      return;
    }
    const headers = { ...mapped.headers };
    if (mapped.body.status === 401) headers['WWW-Authenticate'] = WWW_AUTHENTICATE;
    sendProblem(res, mapped.body, headers);
  };
}

/** For requests no route answered: unknown paths, and operations the contract describes but this version lacks. */
export function notFound(req: Request): ProblemError {
  const operationId = (req as OperationRequest).openapi?.schema?.operationId;
  const detail = operationId
    ? `Operation ${operationId} (${req.method} ${shownPath(req)}) is described in the contract but not implemented in this version`
    : `There is no operation at ${req.method} ${shownPath(req)}`;
  return new ProblemError(problem(404, detail));
}
