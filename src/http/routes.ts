import { hash } from 'node:crypto';
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import {
  type Contract,
  type ContractOperation,
  IDEMPOTENCY_KEY_HEADER,
  type ParameterLocation,
} from '../contract.ts';
import type { Db, DbProvider } from '../db/client.ts';
import type { CostlyReads } from '../db/costlyReads.ts';
import type { PointReads } from '../db/pointReads.ts';
import type { PointWrites } from '../db/pointWrites.ts';
import type { SqlExecutor } from '../db/sandbox/executor.ts';
import { type Actor, actorOf } from '../domain/events/actor.ts';
import { JsonText } from '../domain/jsonText.ts';
import type { Registry } from '../operations/registry.ts';
import {
  type OperationContext,
  type OperationId,
  Reply,
  type ReplyCookie,
  type ReplyInit,
  type RestartWorkers,
} from '../operations/types.ts';
import type { SharedState } from '../state/port.ts';
import { principalOf } from './auth.ts';
import { uploadedFileOf } from './bodies.ts';
import { endCompressed, endCompressedOnce, etagFor, negotiateCoding } from './compression.ts';
import { notFound } from './errors.ts';
import type { IdempotencyKeys, StoredReply } from './idempotency.ts';
import { type PageShape, pageShapeOf, responseChecker, sendPage } from './pages.ts';
import type { OperationRoute } from './pipeline.ts';
import { clientAddressOf } from './rateLimit.ts';
import { operationSerializers, type Serialize } from './serializers.ts';
import type { Services } from './services.ts';

/** Tells every node that credentials may have changed (src/http/credentialCache.ts). */
export type CredentialsChanged = () => Promise<void>;

/*
 * The one dispatcher. By the time a route runs, the authorization stage has resolved the principal
 * and express-openapi-validator has checked parameters and body against the contract, so the input
 * is handed over as the handler's contract type without re-parsing; the erased signature below is
 * where that guarantee is taken on trust. What the handler returns is sent as the contract says:
 * a plain body with the operation's first success status and media type, or a full Reply.
 */
type ErasedHandler = (input: Record<string, unknown>, context: OperationContext) => Promise<unknown>;

type ValidatedRequest = Request & { openapi?: { pathParams?: Record<string, unknown> } };

/** A reply of any operation, as the dispatcher handles it. */
interface ErasedReply {
  status: number;
  headers?: Readonly<Record<string, string>> | undefined;
  cookies?: readonly ReplyCookie[] | undefined;
  mediaType?: string | undefined;
  body?: unknown;
}

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;

function parameterSource(req: ValidatedRequest, location: ParameterLocation): Record<string, unknown> {
  switch (location) {
    case 'path':
      return req.openapi?.pathParams ?? {};
    case 'query':
      return (req.query ?? {}) as Record<string, unknown>;
    case 'header':
      return req.headers;
    case 'cookie':
      return (req.cookies ?? {}) as Record<string, unknown>;
  }
}

/** Exactly the declared parameters (credentials are not an input of any operation). */
function inputOf(req: ValidatedRequest, res: Response, operation: ContractOperation) {
  const input: Record<ParameterLocation, Record<string, unknown>> = {
    path: {},
    query: {},
    header: {},
    cookie: {},
  };
  for (const [name, location] of operation.parameters) {
    const key = location === 'header' ? name.toLowerCase() : name;
    const value = parameterSource(req, location)[key];
    if (value !== undefined) input[location][name] = value;
  }
  const body = operation.multipartBody
    ? { file: uploadedFileOf(req) }
    : operation.hasBody
      ? req.body
      : undefined;
  // Named one by one, as in plainReply: a spread of the parameters cost more than the rest of the function.
  const { path, query, header, cookie } = input;
  return { path, query, header, cookie, body, principal: principalOf(res) };
}

/** The status and media type a plain body is sent with: the contract's success status (src/contract.ts). */
function defaultSuccess(operation: ContractOperation): { status: number; mediaType: string | undefined } {
  const status = operation.successStatus;
  return { status, mediaType: operation.responses.get(status)?.[0] };
}

function setCookie(res: Response, cookie: ReplyCookie): void {
  const { name, value, maxAge, ...options } = cookie;
  res.cookie(name, value, { ...options, ...(maxAge !== undefined && { maxAge: maxAge * 1000 }) });
}

/**
 * A reply whose status or media type the contract does not declare is a bug of the service: the
 * response validator only sees JSON bodies, so this check covers the rest. Off in production, as
 * response validation is.
 */
function checkDeclared(operation: ContractOperation, status: number, mediaType: string | undefined): void {
  const declared = operation.responses.get(status);
  if (declared === undefined) {
    throw new Error(`${operation.operationId} replied ${status}, which the contract does not declare`);
  }
  if (mediaType !== undefined && !declared.includes(mediaType)) {
    throw new Error(
      `${operation.operationId} replied ${status} as ${mediaType}, which the contract does not declare`,
    );
  }
}

type Success = ReturnType<typeof defaultSuccess>;

/**
 * A plain body with the operation's success status and media type, named property by property: a
 * spread of `success` here cost more than a microsecond a request once its site had seen many shapes.
 */
function plainReply({ status, mediaType }: Success, body: unknown): ErasedReply {
  return { status, mediaType, body };
}

type ETagOf = (body: Buffer | string, encoding?: BufferEncoding) => string | undefined;

/** express's default ETag function (weak), the one every app has unless it sets another. */
const EXPRESS_WEAK_ETAG = express().get('etag fn') as ETagOf;

/**
 * What EXPRESS_WEAK_ETAG (the `etag` package, weak) answers for a text or its bytes: hashed from
 * the string as it is (express hashes a Buffer copy of it, which costs a get-one more:
 * bench/RUNTIME.md, "Get one, the request path"), in one call (the package makes a Hash object
 * for every answer).
 */
function weakETagOf(text: string | Buffer, byteLength: number): string {
  if (byteLength === 0) return 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"';
  const digest = hash('sha1', text, 'base64').substring(0, 27);
  return `W/"${byteLength.toString(16)}-${digest}"`;
}

/**
 * A JSON text sent as express's res.send sends it — Content-Type, Content-Length, the app's ETag,
 * 304 when the request is fresh, no body for HEAD — but written as the string it is: res.send turns
 * a body of 1,000 bytes or more into a Buffer (to hash it), and node then writes the headers and
 * the body as two buffers (writev) where it writes one string with its headers in one write. That
 * was a large share of a get-one's CPU (bench/RUNTIME.md, "Get one, the request path"). Statuses
 * without a body keep res.send. A handler's JsonText comes as bytes, with `encoded`, where its
 * compressed forms are kept as long as the text is.
 */
function sendJsonText(
  res: Response,
  text: string | Buffer,
  encoded?: Map<string, Promise<Buffer | undefined>>,
): void {
  if (res.statusCode === 204 || res.statusCode === 205 || res.statusCode === 304) {
    res.type('application/json').send(text);
    return;
  }
  const { req } = res;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  // A handler's JsonText is already bytes: written as they are, never re-encoded.
  const byteLength = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
  res.setHeader('Content-Length', byteLength);
  const coding = negotiateCoding(req, res, byteLength);
  const etagOf = res.app.get('etag fn') as ETagOf | undefined;
  if (typeof etagOf === 'function' && res.getHeader('ETag') === undefined) {
    const etag = etagOf === EXPRESS_WEAK_ETAG ? weakETagOf(text, byteLength) : etagOf(text, 'utf8');
    if (etag) res.setHeader('ETag', coding === undefined ? etag : etagFor(etag, coding));
  }
  if (req.fresh) {
    res.status(304);
    res.removeHeader('Content-Type');
    res.removeHeader('Content-Length');
    res.end();
  } else if (coding !== undefined) {
    if (encoded !== undefined && typeof text !== 'string') endCompressedOnce(res, text, coding, encoded);
    else endCompressed(res, text, coding);
  } else if (req.method === 'HEAD') res.end();
  else if (typeof text === 'string') res.end(text, 'utf8');
  else res.end(text);
}

/**
 * Whether If-None-Match names this ETag (weak comparison, RFC 9110 §13.1.2). Evaluated here for a
 * record's own validator rather than by express's `req.fresh`, which ignores If-None-Match when the
 * request also says `Cache-Control: no-cache` — which fetch adds to every conditional request it
 * is given — while an origin server evaluates the condition whatever the cache directives.
 */
function noneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

async function send(
  res: Response,
  operation: ContractOperation,
  success: Success,
  output: unknown,
  checked: boolean,
  serializerOf: ((status: number) => Serialize | undefined) | undefined,
  page: PageShape | undefined,
): Promise<void> {
  const init: ErasedReply = output instanceof Reply ? output.init : plainReply(success, output);
  const { status, mediaType } = init;
  let { body } = init;
  if (checked) checkDeclared(operation, status, mediaType);
  if (init.headers) res.set(init.headers);
  for (const cookie of init.cookies ?? []) setCookie(res, cookie);
  const etag = init.headers?.ETag;
  const { method, headers } = res.req;
  if (
    etag !== undefined &&
    (method === 'GET' || method === 'HEAD') &&
    status >= 200 &&
    status < 300 &&
    noneMatchHits(headers['if-none-match'], etag)
  ) {
    res.status(304).end();
    return;
  }
  res.status(status);
  if (body instanceof JsonText) {
    // Checked (outside production) as any other body: parsed, then sent the usual way.
    if (checked) body = JSON.parse(body.bytes.toString('utf8'));
    else {
      sendJsonText(res, body.bytes, body.encoded);
      return;
    }
  }
  // A page of records: sent whole while small, streamed record by record when large (pages.ts).
  if (page !== undefined && status === page.status && mediaType === 'application/json') {
    const whole = checked ? () => res.json(body) : (bytes: Buffer) => sendJsonText(res, bytes);
    if (await sendPage(res, page, body, whole)) return;
  }
  const serialize = mediaType === 'application/json' ? serializerOf?.(status) : undefined;
  if (body === undefined) res.end();
  else if (serialize !== undefined) sendJsonText(res, serialize(body));
  else if (mediaType === undefined || JSON_MEDIA_TYPE.test(mediaType)) res.json(body);
  else res.type(mediaType).send(body instanceof Uint8Array ? Buffer.from(body) : String(body));
}

const reply = (init: ReplyInit<OperationId>) => new Reply(init);

/** Runs a handler; one that may change credentials tells every node before anything is answered. */
async function runHandler(
  handler: ErasedHandler,
  changed: CredentialsChanged | undefined,
  input: Record<string, unknown>,
  context: OperationContext,
): Promise<unknown> {
  if (changed === undefined) return handler(input, context);
  try {
    return await handler(input, context);
  } finally {
    await changed();
  }
}

/**
 * A handler's context. A class, not an object literal with getters: V8 gives every such literal a
 * shape of its own (its getters are new closures each time), which made every read of the context
 * in a handler a slow one (bench/RUNTIME.md, "Get one, the request path").
 */
class RequestContext implements OperationContext {
  readonly db: Db;
  readonly provider: DbProvider;
  readonly reads: PointReads;
  readonly costly: CostlyReads;
  readonly writes: PointWrites;
  readonly config: Config;
  readonly state: SharedState;
  readonly restart: RestartWorkers;
  readonly sandbox: SqlExecutor;
  readonly reply = reply;
  readonly #req: Request;
  readonly #logger: Logger;

  constructor(req: Request, services: Services) {
    this.db = services.db;
    this.provider = services.provider;
    this.reads = services.reads;
    this.costly = services.costly;
    this.writes = services.writes;
    this.config = services.config;
    this.state = services.state;
    this.restart = services.restart;
    this.sandbox = services.sandbox;
    this.#req = req;
    this.#logger = services.logger;
  }

  /** Bound to the request when a handler first logs (src/http/logging.ts). */
  get log(): Logger {
    return this.#req.log ?? this.#logger;
  }

  /** Parsed (and an IPv6 address grouped) only for the few handlers that read it. */
  get clientAddress(): string {
    return clientAddressOf(this.#req);
  }

  /** Made only for the handlers that write. */
  get actor(): Actor {
    return actorOf(principalOf(this.#req.res as Response));
  }
}

/** The reply a handler's output stands for, as an idempotent create keeps it for its retries. */
function replyOf(output: unknown, success: Success): StoredReply {
  if (!(output instanceof Reply)) return plainReply(success, output);
  const { status, headers, mediaType, body } = output.init as ErasedReply;
  return { status, headers, mediaType, body };
}

/** Marks a reply as the stored result of an earlier request with the same Idempotency-Key. */
function replayed(reply: StoredReply): Reply {
  return new Reply({
    ...reply,
    headers: { ...reply.headers, 'Idempotent-Replayed': 'true' },
  } as ReplyInit<OperationId>);
}

function dispatch(
  handler: ErasedHandler,
  operation: ContractOperation,
  services: Services,
  credentialsChanged: CredentialsChanged | undefined,
  contract: Contract,
  idempotencyKeys: IdempotencyKeys | undefined,
): RequestHandler {
  const checked = services.config.nodeEnv !== 'production';
  // Compiled serialisers replace JSON.stringify where responses are not validated (production).
  const serializerOf = checked ? undefined : operationSerializers(contract, operation.path, operation.method);
  const changed = operation.changesCredentials ? credentialsChanged : undefined;
  // Decided by the contract: once per operation, not per request.
  const success = defaultSuccess(operation);
  const page =
    success.mediaType === 'application/json'
      ? pageShapeOf(
          contract,
          operation,
          success.status,
          !checked,
          checked ? responseChecker(operation.operationId) : undefined,
        )
      : undefined;
  const keys = operation.idempotent ? idempotencyKeys : undefined;
  return async (req, res) => {
    const input = inputOf(req, res, operation);
    const key = keys && (input.header[IDEMPOTENCY_KEY_HEADER] as string | undefined);
    if (keys === undefined || key === undefined) {
      const output = await runHandler(handler, changed, input, new RequestContext(req, services));
      await send(res, operation, success, output, checked, serializerOf, page);
      return;
    }
    // A create with an Idempotency-Key (src/http/idempotency.ts): run once, answer retries alike.
    const start = await keys.start(operation, input.principal, key, input);
    if (start.kind === 'replay') {
      await send(res, operation, success, replayed(start.reply), checked, serializerOf, page);
      return;
    }
    let output: unknown;
    try {
      output = await runHandler(handler, changed, input, new RequestContext(req, services));
    } catch (error) {
      await start.release();
      throw error;
    }
    await start.complete(replyOf(output, success));
    await send(res, operation, success, output, checked, serializerOf, page);
  };
}

/** What runs for an operation the contract describes but this version lacks (after validation). */
const notImplemented: RequestHandler = (req, _res, next) => next(notFound(req));

/**
 * Every operation of the contract with its chain: the operation's stages (authorization, parameter
 * checks, validation: given by `stagesOf`, in order) and then its handler — or, for an operation
 * without one, the not-implemented 404. Each stage is built for its operation at start-up; the
 * pipeline (src/http/pipeline.ts) finds a request's operation and runs its chain. A chain that
 * passes a request on leaves it to the answers for unknown paths and methods.
 */
export function operationRoutes(
  contract: Contract,
  registry: Registry,
  services: Services,
  /** Absent when no node caches credentials. */
  credentialsChanged: CredentialsChanged | undefined,
  stagesOf: (operation: ContractOperation) => RequestHandler[],
  /** Where the `x-idempotent` operations keep their keys' results. */
  idempotencyKeys?: IdempotencyKeys,
): OperationRoute[] {
  return contract.operations.map((operation) => {
    const handler = registry[operation.operationId as OperationId] as ErasedHandler | undefined;
    return {
      operation,
      stages: [
        ...stagesOf(operation),
        handler === undefined
          ? notImplemented
          : dispatch(handler, operation, services, credentialsChanged, contract, idempotencyKeys),
      ],
    };
  });
}
