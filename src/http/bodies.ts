import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type RequestHandler } from 'express';
import type { ContractOperation } from '../contract.ts';
import { ProblemError, problem, sendProblem } from './problem.ts';

/*
 * What a request body costs, and when. A body is read only inside its operation's route, after the
 * rate limiter and the authorization stage have let the request through (src/http/app.ts): an
 * anonymous request on a protected operation, or one turned away for any other reason before its
 * body is needed, costs no more than its headers (docs/security/requests.md). What is read is
 * bounded before anything walks it: its declared length (refused before a byte is read), then, on
 * the raw bytes and before JSON.parse, its nesting depth and its number of items, so that neither
 * the parser, the NUL check nor the validator can be made to spend seconds on one body.
 */

/** Content bodies are HTML and may be large; anything beyond this is a 413. */
export const JSON_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

/** Public operations (logins, the captcha check) take a few short fields; anything beyond this is a 413. */
export const PUBLIC_BODY_LIMIT_BYTES = 64 * 1024;

/** Objects and arrays nested deeper than this are a 400; the contract's deepest body needs 4. */
export const MAX_JSON_DEPTH = 32;

/**
 * Object members and array elements a body may hold, all levels together; more is a 400. The
 * contract's largest body (a list with 100 conditions of three fields) holds a few hundred.
 */
export const MAX_JSON_ITEMS = 10_000;

/**
 * A body answered before it was read — a 401, a 429, a path without an operation, an operation that
 * takes no body — is discarded by node after the answer, so that the connection can serve the next
 * request. Up to this many declared bytes that costs next to nothing and keeps a keep-alive client's
 * connection; a longer or chunked (unbounded) body is not waited for: the answer closes the
 * connection instead.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024;

export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Requests whose answer closes the connection until their body has been read in full. */
// Not shared state: a mark on each request, collected with its request.
const closingUnlessRead = new WeakSet<IncomingMessage>();

/**
 * The app's first stage for bodies: a request whose body would be too long to discard after an
 * early answer is marked `Connection: close` at once; reading the body in full (verifyJsonShape)
 * lifts the mark. Every answer sent before that, by whichever stage, thus closes the connection.
 */
export function unreadBodies(drainLimitBytes: number = DRAIN_LIMIT_BYTES): RequestHandler {
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    const declared = Number(req.headers['content-length']);
    if (
      req.headers['transfer-encoding'] !== undefined ||
      !Number.isFinite(declared) ||
      declared > drainLimitBytes
    ) {
      res.setHeader('Connection', 'close');
      closingUnlessRead.add(req);
    }
    next();
  };
}

/**
 * A declared length above the limit is answered at once and the connection closed; a body without
 * a JSON media type is a 415 (without this, express.json would skip it and an update would answer
 * 200 having read nothing).
 */
export function checkBodies(limitBytes: number = JSON_BODY_LIMIT_BYTES): RequestHandler {
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limitBytes) {
      res.setHeader('Connection', 'close');
      sendProblem(
        res,
        problem(413, `The request body is ${declared} bytes; the service accepts at most ${limitBytes}`),
      );
      return;
    }
    if (!req.is(JSON_MEDIA_TYPES)) return next(unsupportedMediaType(req.headers['content-type']));
    next();
  };
}

/** The one 415 of the service, whoever notices the media type first. */
export function unsupportedMediaType(given: string | undefined): ProblemError {
  const detail = given
    ? `Content-Type '${given.split(';')[0]?.trim()}' is not supported here; send application/json`
    : 'The request has no Content-Type; send the body as application/json';
  return new ProblemError(problem(415, detail));
}

export interface JsonShape {
  /** How deep objects and arrays nest. */
  depth: number;
  /** Object members and array elements, all levels together (an empty container counts one). */
  items: number;
}

/**
 * The shape of a JSON text, counted on its bytes without parsing it (brackets and commas inside
 * strings do not count); the count stops as soon as it is beyond either limit.
 */
export function jsonShape(
  text: Buffer | string,
  limits: JsonShape = { depth: Number.POSITIVE_INFINITY, items: Number.POSITIVE_INFINITY },
): JsonShape {
  const source = typeof text === 'string' ? Buffer.from(text) : text;
  let depth = 0;
  let deepest = 0;
  // Each container counts one, each comma one more: n members or elements count n.
  let items = 0;
  let inString = false;
  for (let i = 0; i < source.length; i++) {
    const byte = source[i];
    if (inString) {
      if (byte === 0x5c)
        i++; // a backslash escapes the next byte
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x2c) {
      if (++items > limits.items) break;
    } else if (byte === 0x7b || byte === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limits.depth || ++items > limits.items) break;
    } else if (byte === 0x7d || byte === 0x5d) depth--;
  }
  return { depth: deepest, items };
}

/** Nesting depth of a JSON text (see jsonShape). */
export function jsonDepth(text: Buffer | string, stopAbove = Number.POSITIVE_INFINITY): number {
  return jsonShape(text, { depth: stopAbove, items: Number.POSITIVE_INFINITY }).depth;
}

const malformed = (detail: string) => new ProblemError(problem(400, detail, { kind: 'malformed-json' }));

/**
 * express.json's `verify` hook: runs on the raw bytes once the whole body has arrived, before
 * JSON.parse. The body has been read, so an answer no longer needs to close the connection.
 */
export function verifyJsonShape(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  if (closingUnlessRead.delete(req)) res.removeHeader('Connection');
  const shape = jsonShape(body, { depth: MAX_JSON_DEPTH, items: MAX_JSON_ITEMS });
  if (shape.depth > MAX_JSON_DEPTH)
    throw malformed(`The request body is nested more than ${MAX_JSON_DEPTH} levels deep`);
  if (shape.items > MAX_JSON_ITEMS)
    throw malformed(
      `The request body holds more than ${MAX_JSON_ITEMS} items (object members and array elements)`,
    );
}

/**
 * The body stages — the check above, the JSON parser, then `after` (the NUL check) — as one layer.
 * A request that declares no body at all (neither Content-Length nor Transfer-Encoding, which is
 * what the JSON parser itself takes for "no body") goes straight to `after`: the check and the
 * parser do nothing for it but leave `req.body` undefined, as done here. Three layers cost every GET
 * a layer walk each (bench/RUNTIME.md, "Get one, the request path").
 */
export function bodyStages(
  check: RequestHandler,
  parse: RequestHandler,
  after: RequestHandler,
): RequestHandler {
  return (req, res, next) => {
    if (req.headers['transfer-encoding'] === undefined && req.headers['content-length'] === undefined) {
      if (!Reflect.has(req, 'body')) req.body = undefined;
      after(req, res, next);
      return;
    }
    check(req, res, (checkError?: unknown) => {
      if (checkError) return next(checkError);
      parse(req, res, (parseError?: unknown) => {
        if (parseError) return next(parseError);
        after(req, res, next);
      });
    });
  };
}

/**
 * The body stage of one operation's route, then `after`. An operation the contract gives no
 * request body never reads one (whatever is sent is discarded as unreadBodies says); the others
 * read theirs within the limit of their kind: public operations a short one, the rest up to
 * JSON_BODY_LIMIT_BYTES.
 */
export function operationBody(
  operation: Pick<ContractOperation, 'hasBody' | 'access'>,
  after: RequestHandler,
): RequestHandler {
  if (!operation.hasBody) {
    return (req, res, next) => {
      if (!Reflect.has(req, 'body')) req.body = undefined;
      after(req, res, next);
    };
  }
  const limit = operation.access === 'public' ? PUBLIC_BODY_LIMIT_BYTES : JSON_BODY_LIMIT_BYTES;
  return bodyStages(
    checkBodies(limit),
    express.json({ limit, type: JSON_MEDIA_TYPES, verify: verifyJsonShape }),
    after,
  );
}
