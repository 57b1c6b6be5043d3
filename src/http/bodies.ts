import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { ProblemError, problem, sendProblem } from './problem.ts';

/*
 * What a request body must be before anything reads it: JSON (the service takes nothing else), no
 * larger than the limit — refused from its declared length, before a byte of it is read — and no
 * deeper than a sane document, so that nothing recursive downstream (validation, the NUL check) can
 * run out of stack on a few kilobytes of brackets.
 */

/** Content bodies are HTML and may be large; anything beyond this is a 413. */
export const JSON_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

/** Objects and arrays nested deeper than this are a 400; the contract's deepest body needs 4. */
export const MAX_JSON_DEPTH = 32;

export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
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

/** Nesting depth of a JSON text, counted without parsing it (brackets inside strings do not count). */
export function jsonDepth(text: Buffer | string, stopAbove = Number.POSITIVE_INFINITY): number {
  const source = typeof text === 'string' ? Buffer.from(text) : text;
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < source.length; i++) {
    const byte = source[i];
    if (inString) {
      if (byte === 0x5c)
        i++; // a backslash escapes the next byte
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x7b || byte === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > stopAbove) return deepest;
    } else if (byte === 0x7d || byte === 0x5d) depth--;
  }
  return deepest;
}

/** express.json's `verify` hook: runs on the raw bytes, before JSON.parse. */
export function verifyJsonDepth(_req: IncomingMessage, _res: unknown, body: Buffer): void {
  if (jsonDepth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new ProblemError(
      problem(400, `The request body is nested more than ${MAX_JSON_DEPTH} levels deep`, {
        kind: 'malformed-json',
      }),
    );
  }
}

/**
 * The body stages — the check above, the JSON parser, then `after` (the NUL check) — as one layer.
 * A request that declares no body at all (neither Content-Length nor Transfer-Encoding, which is
 * what the JSON parser itself takes for "no body") goes straight to `after`: the check and the
 * parser do nothing for it but leave `req.body` undefined, as done here. Three app-level layers cost
 * every GET a layer walk each (bench/RUNTIME.md, "Get one, the request path").
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
