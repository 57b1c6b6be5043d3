import type { IncomingMessage, ServerResponse } from 'node:http';
import busboy from 'busboy';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { type ContractOperation, MULTIPART_FORM_DATA } from '../contract.ts';
import type { UploadedFile } from '../operations/types.ts';
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

/**
 * Content-Types the service reads itself (readJson): a JSON media type, alone or with a UTF-8
 * charset. Each value it matches is one that type-is takes for JSON_MEDIA_TYPES (content-type's
 * type, trimmed and lower-cased, passes media-typer's test and matches `application/json` or
 * `application/*+json`) and whose charset body-parser reads as `utf-8`; any other value, even one
 * they would accept, goes through express.json.
 */
const PLAIN_JSON =
  /^[ \t]*application\/(?:json|[a-z0-9][a-z0-9!#$&^_.+-]{0,121}\+json)[ \t]*(?:;[ \t]*charset[ \t]*=[ \t]*(?:utf-8|"utf-8")[ \t]*)?$/i;

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
    // PLAIN_JSON's values are JSON to type-is too, which is asked about the others only.
    const type = req.headers['content-type'];
    if (!(type !== undefined && PLAIN_JSON.test(type)) && !req.is(JSON_MEDIA_TYPES))
      return next(unsupportedMediaType(type));
    next();
  };
}

/** The one 415 of the service, whoever notices the media type first. */
export function unsupportedMediaType(given: string | undefined, wanted = 'application/json'): ProblemError {
  const detail = given
    ? `Content-Type '${given.split(';')[0]?.trim()}' is not supported here; send ${wanted}`
    : `The request has no Content-Type; send the body as ${wanted}`;
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

/*
 * The answers to a body that could not be taken, the same whichever reader met it: readJson here,
 * or express.json, whose errors src/http/errors.ts maps to these.
 */

/** A body that is not JSON, or (body-parser's strict mode) not an object or array; never quoted. */
export const notJsonBody = () =>
  problem(400, 'The request body is not valid JSON', { kind: 'malformed-json' });

/** A body that grew past its limit while it was read (a declared length beyond it is refused by checkBodies). */
export const tooLargeBody = () => problem(413, 'The request body is too large');

/** A body that could not be read: cut short, not the length declared, or (express.json) corrupt gzip. */
export const unreadableBody = (status = 400) => problem(status, 'The request could not be read');

/**
 * Runs on the raw bytes once the whole body has arrived, before JSON.parse (readJson, and
 * express.json's `verify` hook). The body has been read, so an answer no longer needs to close the
 * connection.
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
 * Whether body-parser would leave the request alone as read already (on-finished's isFinished): its
 * connection gone, or its body consumed. (Node hands the app no upgrade request, the third case.)
 */
function finished(req: IncomingMessage): boolean {
  return !req.socket?.readable || (req.complete && !req.readable);
}

/**
 * A body read in full, as body-parser takes it: verifyJsonShape on the bytes, then UTF-8 without a
 * leading BOM (iconv-lite's decoding: node's, replacement characters alike), then strict JSON — an
 * empty body is `{}`, any other must hold an object or an array after RFC 8259 whitespace. With
 * `keepText`, the text of a body parsed is kept for jsonTextOf.
 */
function parsedBody(req: IncomingMessage, res: ServerResponse, bytes: Buffer, keepText: boolean): unknown {
  verifyJsonShape(req, res, bytes);
  const decoded = bytes.toString('utf8');
  const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  if (text.length === 0) return {};
  let first = 0;
  for (let c = text.charCodeAt(0); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; )
    c = text.charCodeAt(++first);
  const opening = text.charCodeAt(first);
  if (opening !== 0x7b && opening !== 0x5b) throw new ProblemError(notJsonBody());
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ProblemError(notJsonBody());
  }
  if (keepText) jsonTexts.set(req, text);
  return parsed;
}

/** The text of each JSON body readJson parsed for an operation that keeps it (jsonBody's keepText). */
const jsonTexts = new WeakMap<IncomingMessage, string>();

/**
 * The text whose parse is this request's body — when readJson read it (UTF-8 sent as is, a
 * non-empty body) for an operation that keeps it; undefined otherwise (other readers, no body).
 */
export function jsonTextOf(req: IncomingMessage): string | undefined {
  return jsonTexts.get(req);
}

/**
 * express.json's reading of a request with a PLAIN_JSON Content-Type and no Content-Encoding, without
 * body-parser, raw-body, iconv-lite and type-is (a large share of a short request's CPU), step for
 * step as they do it (body-parser 2.4's read.js and types/json.js, raw-body 3.0's readStream): at
 * most `limitBytes`, as many as declared, then parsedBody. A body past the limit is read to its end
 * and dropped, as body-parser does, before the 413 (whose connection closes: its body was never
 * taken, see unreadBodies); a request cut short is a 400.
 */
function readJson(
  req: Request,
  res: Response,
  next: NextFunction,
  limitBytes: number,
  keepText: boolean,
): void {
  if (finished(req)) {
    next();
    return;
  }
  if (!Reflect.has(req, 'body')) req.body = undefined;
  const declared = req.headers['content-length'];
  const length = Number(declared);
  // type-is's hasBody, always true here: bodyStages sends only requests that declare a length or a
  // transfer encoding.
  if (req.headers['transfer-encoding'] === undefined && Number.isNaN(length)) {
    next();
    return;
  }
  const expected = declared === undefined || Number.isNaN(length) ? null : Number.parseInt(declared, 10);
  if (!req.readable) {
    next(new Error('The request body stream is not readable'));
    return;
  }
  const socket = req.socket;
  const chunks: Buffer[] = [];
  let received = 0;
  let tooLarge = false;
  let done = false;
  const finish = (error: ProblemError | undefined) => {
    if (done) return;
    done = true;
    req.removeListener('data', onData);
    req.removeListener('end', onEnd);
    req.removeListener('aborted', onCut);
    req.removeListener('close', onCut);
    req.removeListener('error', onCut);
    if (tooLarge) {
      socket.removeListener('close', onEnd);
      socket.removeListener('error', onEnd);
    }
    let failure: unknown = error;
    if (failure === undefined) {
      try {
        req.body = parsedBody(
          req,
          res,
          chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received),
          keepText,
        );
      } catch (parseError) {
        failure = parseError;
      }
    }
    next(failure);
  };
  function onData(chunk: Buffer) {
    received += chunk.length;
    if (tooLarge) return;
    if (received > limitBytes) overLimit();
    else chunks.push(chunk);
  }
  function onEnd() {
    if (tooLarge) finish(new ProblemError(tooLargeBody()));
    else if (expected !== null && received !== expected) finish(new ProblemError(unreadableBody()));
    else finish(undefined);
  }
  // Cut short: node emits 'aborted' (what raw-body listens for), then 'close'.
  function onCut() {
    finish(new ProblemError(unreadableBody()));
  }
  // As body-parser after raw-body's 413: the rest is read and dropped, and the 413 waits for the end
  // of the request or of its connection (on-finished).
  function overLimit() {
    tooLarge = true;
    chunks.length = 0;
    req.removeListener('aborted', onCut);
    req.removeListener('close', onCut);
    req.removeListener('error', onCut);
    socket.on('close', onEnd);
    socket.on('error', onEnd);
  }
  req.on('data', onData);
  req.on('end', onEnd);
  if (expected !== null && expected > limitBytes) overLimit();
  else {
    req.on('aborted', onCut);
    req.on('close', onCut);
    req.on('error', onCut);
  }
}

/**
 * The JSON parser of an operation's body stages: readJson for UTF-8 JSON sent as is (nearly every
 * request), express.json for everything else (compressed bodies, other charsets, other
 * parameters), whose answers (415, 400, limits on inflated bytes) thus stay its own. `keepText`:
 * the text readJson parsed is kept for jsonTextOf.
 */
export function jsonBody(limitBytes: number, { keepText = false } = {}): RequestHandler {
  const general = express.json({ limit: limitBytes, type: JSON_MEDIA_TYPES, verify: verifyJsonShape });
  return (req, res, next) => {
    const type = req.headers['content-type'];
    const coding = req.headers['content-encoding'];
    if (
      type === undefined ||
      !PLAIN_JSON.test(type) ||
      (coding !== undefined && coding !== '' && coding.toLowerCase() !== 'identity')
    )
      return general(req, res, next);
    readJson(req, res, next, limitBytes, keepText);
  };
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
 * What a multipart body may hold beyond its file: the boundaries and the part's headers. A declared
 * length beyond the file limit plus this is refused before a byte is read.
 */
export const MULTIPART_OVERHEAD_BYTES = 16 * 1024;

/** The file part each multipart request brought, for the dispatcher (src/http/routes.ts). */
const uploads = new WeakMap<IncomingMessage, UploadedFile>();

/** The file part of a multipart request that the upload stage read; undefined for any other request. */
export function uploadedFileOf(req: IncomingMessage): UploadedFile | undefined {
  return uploads.get(req);
}

const badUpload = (detail: string) => new ProblemError(problem(400, detail));

const tooLong = (limitBytes: number) =>
  new ProblemError(problem(413, `The file is longer than ${limitBytes} bytes, the most an avatar may have`));

/**
 * The body stage of an upload (`multipart/form-data`): exactly one file part, of at most
 * `limitBytes`, counted as it streams in (busboy), so that a longer file is never held whole. A
 * declared length beyond the limit (with the multipart overhead) is refused at once; a longer file
 * is refused once it passes the limit, its rest read and discarded up to DRAIN_LIMIT_BYTES more (so
 * that the client, still sending, reads the answer), beyond which the connection is closed. A plain
 * field, a second part, or none: 400. What the file holds is judged by the operation, not here: the
 * part's file name and Content-Type are not even kept.
 */
export function uploadBody(limitBytes: number): RequestHandler {
  const maxBodyBytes = limitBytes + MULTIPART_OVERHEAD_BYTES;
  return (req, res, next) => {
    if (!req.is(MULTIPART_FORM_DATA)) {
      if (hasBody(req) || req.headers['content-type'] !== undefined)
        return next(unsupportedMediaType(req.headers['content-type'], MULTIPART_FORM_DATA));
      return next(badUpload('The request has no body; send one file part as multipart/form-data'));
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      res.setHeader('Connection', 'close');
      return next(tooLong(limitBytes));
    }
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // busboy tells a limit when a part beyond it begins (files, fields), or once the parts seen
        // reach it (parts): any of them means more than the one file part.
        limits: { files: 1, fields: 0, parts: 2, fileSize: limitBytes, headerPairs: 20 },
      });
    } catch {
      return next(badUpload('The multipart body has no boundary in its Content-Type'));
    }
    let file: UploadedFile | undefined;
    let failure: ProblemError | undefined;
    let done = false;
    const fail = (error: ProblemError) => {
      failure ??= error;
    };
    const finish = (error: ProblemError | undefined) => {
      if (done) return;
      done = true;
      req.removeListener('data', count);
      if (error === undefined && file === undefined)
        error = badUpload('The body has no file part; send the image as the one file part');
      if (error !== undefined) return next(error);
      uploads.set(req, file as UploadedFile);
      req.body = {};
      next();
    };
    let received = 0;
    // Beyond the limit the rest is discarded, not waited for without end.
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= maxBodyBytes + DRAIN_LIMIT_BYTES) return;
      req.unpipe(parser);
      req.pause();
      res.setHeader('Connection', 'close');
      finish(failure ?? tooLong(limitBytes));
    };
    req.on('data', count);
    parser.on('file', (field, stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        if (failure === undefined) chunks.push(chunk);
      });
      stream.on('limit', () => fail(tooLong(limitBytes)));
      stream.on('end', () => {
        if (failure === undefined) file = { bytes: Buffer.concat(chunks), field };
      });
    });
    const onePart = () =>
      fail(badUpload('The body must hold exactly one part, the image file, and nothing else'));
    parser.on('partsLimit', onePart);
    parser.on('filesLimit', onePart);
    parser.on('fieldsLimit', onePart);
    parser.on('error', () => finish(failure ?? badUpload('The multipart body is malformed')));
    parser.on('close', () => {
      // Read in full: an answer no longer needs to close the connection.
      if (closingUnlessRead.delete(req)) res.removeHeader('Connection');
      finish(failure);
    });
    req.pipe(parser);
  };
}

/**
 * The body stage of one operation's route, then `after`. An operation the contract gives no
 * request body never reads one (whatever is sent is discarded as unreadBodies says); the others
 * read theirs within the limit of their kind: public operations a short one, the rest up to
 * JSON_BODY_LIMIT_BYTES.
 */
export function operationBody(
  operation: Pick<ContractOperation, 'hasBody' | 'access' | 'multipartBody' | 'safe'>,
  after: RequestHandler,
  uploadLimitBytes: number,
): RequestHandler {
  if (operation.multipartBody) {
    const upload = uploadBody(uploadLimitBytes);
    return (req, res, next) =>
      upload(req, res, (error?: unknown) => (error ? next(error) : after(req, res, next)));
  }
  if (!operation.hasBody) {
    return (req, res, next) => {
      if (!Reflect.has(req, 'body')) req.body = undefined;
      after(req, res, next);
    };
  }
  const limit = operation.access === 'public' ? PUBLIC_BODY_LIMIT_BYTES : JSON_BODY_LIMIT_BYTES;
  // A safe operation's body text is part of the input whose verdict the validator's stage keeps.
  return bodyStages(checkBodies(limit), jsonBody(limit, { keepText: operation.safe }), after);
}
