import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { DbHandle } from '../db/client.ts';
import type { Actor } from '../domain/events/actor.ts';
import type { JsonText } from '../domain/jsonText.ts';
import type { Principal } from '../domain/principal.ts';
import type { SqlExecutor } from '../domain/stl/sql/sandbox.ts';
import type { operations } from '../generated/openapi.ts';
import type { SharedState } from '../state/port.ts';

/*
 * Every handler is typed from the contract: its input is the validated request of its operation
 * (path, query, header and cookie parameters, body) and the principal the authorization stage
 * resolved; its output is either the operation's success body, or a full reply built with
 * `context.reply` (any success status the operation declares, headers, cookies, and a body of a
 * declared media type — bytes for an image). A handler that drifts from openapi/cms.yaml fails to
 * compile. The dispatcher (src/http/routes.ts) does the HTTP; no handler touches express.
 */

export type OperationId = keyof operations;

type Location = 'path' | 'query' | 'header' | 'cookie';

type Section<O, Where extends Location> = O extends { parameters: infer P }
  ? P extends { [K in Where]?: infer T }
    ? [T] extends [undefined | never]
      ? Record<string, never>
      : NonNullable<T>
    : Record<string, never>
  : Record<string, never>;

/** An optional request body may be absent altogether: the handler sees undefined then. */
type JsonBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : O extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B | undefined
    : undefined;

/** A file part of a `multipart/form-data` body, as read within the upload limit (src/http/bodies.ts). */
export interface UploadedFile {
  /** The part's bytes, exactly as sent. */
  bytes: Uint8Array;
  /** The part's field name. */
  field: string;
}

/**
 * A `multipart/form-data` body: its one file part (the HTTP stage refuses any other shape), the
 * rest of the contract's fields being for documentation.
 */
type Body<O> = O extends { requestBody: { content: { 'multipart/form-data': unknown } } }
  ? { file: UploadedFile }
  : JsonBody<O>;

type Responses<K extends OperationId> = operations[K]['responses'];

/** The operation's first success status is its default: what a handler's plain body is sent with. */
type OkBody<O> = O extends { responses: { 200: { content: infer C } } } ? C[keyof C] : never;

/** A 200 JSON body may also be given as its text (src/domain/jsonText.ts), sent as it is. */
type OkJsonText<O> = O extends { responses: { 200: { content: { 'application/json': infer T } } } }
  ? JsonText<T>
  : never;

export interface OperationInput<K extends OperationId> {
  path: Section<operations[K], 'path'>;
  query: Section<operations[K], 'query'>;
  /** Declared header parameters, under the names the contract gives them. */
  header: Section<operations[K], 'header'>;
  /** Declared cookie parameters. */
  cookie: Section<operations[K], 'cookie'>;
  body: Body<operations[K]>;
  /** Who is calling: anonymous on public operations. */
  principal: Principal;
}

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 205 | 206 | 300 | 301 | 302 | 303 | 304 | 307 | 308;

type ContentOf<R> = R extends { content: infer C } ? ([C] extends [never | undefined] ? never : C) : never;

/** JSON bodies are objects of the schema (or their text); anything else may also be sent as bytes. */
type BodyAs<T, M> = M extends 'application/json' | `${string}+json` ? T | JsonText<T> : T | Uint8Array;

type ReplyBody<R> = [ContentOf<R>] extends [never]
  ? { mediaType?: undefined; body?: undefined }
  : { [M in keyof ContentOf<R>]: { mediaType: M; body: BodyAs<ContentOf<R>[M], M> } }[keyof ContentOf<R>];

export interface ReplyCookie {
  name: string;
  value: string;
  /** Lifetime in seconds; a session cookie when absent. */
  maxAge?: number;
  path?: string;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: 'strict' | 'lax' | 'none';
}

/** A full reply: any success status the operation declares, with a body of that status's media type. */
export type ReplyInit<K extends OperationId> = K extends OperationId
  ? {
      [S in Extract<keyof Responses<K>, SuccessStatus>]: {
        status: S;
        headers?: Readonly<Record<string, string>>;
        cookies?: readonly ReplyCookie[];
      } & ReplyBody<Responses<K>[S]>;
    }[Extract<keyof Responses<K>, SuccessStatus>]
  : never;

/** What context.reply makes; the dispatcher tells it from a plain body by its class. */
export class Reply<K extends OperationId = OperationId> {
  constructor(readonly init: ReplyInit<K>) {}
}

export type OperationOutput<K extends OperationId> =
  | OkBody<operations[K]>
  | OkJsonText<operations[K]>
  | Reply<K>;

/**
 * Asks this process's supervisor to replace its workers one at a time (and the other nodes to do
 * the same); resolves true once the supervisor has the request, false when the process has none.
 */
export type RestartWorkers = () => Promise<boolean>;

/**
 * The process's services a handler may use: the part of its Services (src/http/services.ts, made by
 * src/compose.ts) that the dispatcher hands on.
 */
export interface HandlerServices extends DbHandle {
  /** Carries the token secret (see ensureTokenSecret). */
  config: Config;
  /** State every node shares: counters with expiry, single-use marks, signals (src/state/port.ts). */
  state: SharedState;
  /** Rolling restart of the service's workers (restartSystem). */
  restart: RestartWorkers;
  /** The SQL sandbox of the service's own database (stl/sqlContents). */
  sandbox: SqlExecutor;
}

export interface OperationContext<K extends OperationId = OperationId> extends HandlerServices {
  log: Logger;
  /**
   * The client's network address, for limits per address (e.g. captcha checks): the peer of the
   * connection as express reports it (`req.ip`), an IPv6 address cut to its /56 network as the
   * request limiter counts it, so rotating addresses within one's own prefix escapes nothing.
   * Not a declared input: no request carries it in a parameter the client controls.
   */
  clientAddress: string;
  /**
   * Who the operation's writes record as having made them in their events: its principal's actor
   * (src/domain/events/actor.ts).
   */
  actor: Actor;
  /** Builds a full reply, typed by this operation's declared responses. */
  reply(init: ReplyInit<K>): Reply<K>;
}

export type Handler<K extends OperationId> = (
  input: OperationInput<K>,
  context: OperationContext<K>,
) => Promise<OperationOutput<K>>;
