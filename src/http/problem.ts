import { STATUS_CODES } from 'node:http';
import type { Response } from 'express';

/** RFC 9457 problem details, plus `message` (= detail) for clients of the original system. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  message: string;
  errors?: FieldError[];
}

export interface FieldError {
  /** Where in the request: `/body/wheres/0/operator`, `/query/page`, `/path/id`. */
  path: string;
  message: string;
}

export const PROBLEM_TYPE_BASE = 'https://cms.example/problems/';

/** Problem kinds beyond the status, so that clients can branch without parsing `detail`. */
export type ProblemKind =
  | 'bad-request'
  | 'validation'
  | 'malformed-json'
  | 'conflict'
  | 'unauthorized'
  | 'forbidden'
  | 'not-found'
  | 'method-not-allowed'
  | 'payload-too-large'
  | 'unsupported-media-type'
  | 'too-many-requests'
  | 'internal'
  | 'service-unavailable';

const DEFAULT_KIND: Record<number, ProblemKind> = {
  400: 'bad-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  429: 'too-many-requests',
  503: 'service-unavailable',
};

export function problem(
  status: number,
  detail: string,
  options: { kind?: ProblemKind; errors?: FieldError[] } = {},
): Problem {
  const kind = options.kind ?? DEFAULT_KIND[status] ?? 'internal';
  const body: Problem = {
    type: PROBLEM_TYPE_BASE + kind,
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
