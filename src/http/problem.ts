import { STATUS_CODES } from 'node:http';
import type { Response } from 'express';
import type { components } from '../generated/openapi.ts';

/** RFC 9457 problem details, plus `message` (= detail) for clients of the original system. */
export type Problem = components['schemas']['Problem'];

export type FieldError = NonNullable<Problem['errors']>[number];

export const PROBLEM_TYPE_BASE = 'https://cms.example/problems/';

/**
 * Problem kinds beyond the status, so that clients can branch without parsing `detail`. The
 * contract's Problem schema lists every type URI (with what it means) once; the kinds are derived
 * from it, so a kind the contract does not document does not compile.
 */
export type ProblemKind = Problem['type'] extends infer T
  ? T extends `${typeof PROBLEM_TYPE_BASE}${infer Kind}`
    ? Kind
    : never
  : never;

const DEFAULT_KIND: Record<number, ProblemKind> = {
  400: 'bad-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  409: 'conflict',
  408: 'request-timeout',
  413: 'payload-too-large',
  431: 'headers-too-large',
  415: 'unsupported-media-type',
  429: 'rate-limited',
  503: 'service-unavailable',
};

export function problem(
  status: number,
  detail: string,
  options: { kind?: ProblemKind; errors?: FieldError[] } = {},
): Problem {
  const kind = options.kind ?? DEFAULT_KIND[status] ?? 'internal';
  const body: Problem = {
    type: `${PROBLEM_TYPE_BASE}${kind}`,
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    message: detail,
  };
  if (options.errors !== undefined && options.errors.length > 0) body.errors = options.errors;
  return body;
}

/** A response decided outside the domain (e.g. readiness): thrown, and sent as is by the error mapper. */
export class ProblemError extends Error {
  constructor(
    readonly problem: Problem,
    readonly headers: Record<string, string> = {},
  ) {
    super(problem.detail);
    this.name = 'ProblemError';
  }
}

/** How long clients should wait before retrying when the database cannot be reached. */
export const RETRY_AFTER_SECONDS = 5;

export function serviceUnavailable(detail: string): ProblemError {
  return new ProblemError(problem(503, detail), { 'Retry-After': String(RETRY_AFTER_SECONDS) });
}

/**
 * Sent with res.send, not res.json: the response validator hooks res.json and would judge an
 * error against the operation's success schemas (or fail for statuses the contract omits).
 */
export function sendProblem(res: Response, body: Problem, headers: Record<string, string> = {}): void {
  res.status(body.status);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.type('application/problem+json').send(JSON.stringify(body));
}
