import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { ContractOperation } from '../contract.ts';

/*
 * How a request passes through the app's stages, in place of express's router. The router walks a
 * list of layers for every request — each app stage, then each of the contract's ~100 routes in
 * turn, testing its regular expression — and wraps every step in closures of its own; that walk was
 * a large share of a short request's CPU (bench/README.md, "The app's own pipeline"). Here the
 * stages are plain lists run in order, and a request finds its operation in a table made once:
 * the routes of its method and number of path segments, tried in the contract's order as the
 * router tried them. What a stage sees is what the router gave it: express's request and response
 * (the app's prototypes), `req.params` decoded, `req.baseUrl` empty, `req.originalUrl`, `res.locals`,
 * and a rejected promise or a throw passed on as `next(error)`.
 */

/** An operation and the stages that serve it, its handler last (src/http/routes.ts). */
export interface OperationRoute {
  operation: ContractOperation;
  stages: readonly RequestHandler[];
}

/** A path template's segments: literal text (compared in lower case) or a parameter's name. */
type Segment = { literal: string } | { parameter: string };

interface CompiledRoute extends OperationRoute {
  segments: readonly Segment[];
}

function segmentsOf(template: string): Segment[] {
  return template
    .split('/')
    .slice(1)
    .map((part) => {
      const parameter = /^\{([^}]+)\}$/.exec(part)?.[1];
      return parameter === undefined ? { literal: part.toLowerCase() } : { parameter };
    });
}

/**
 * A path parameter as express's router decodes it: percent-decoded, and an invalid escape a
 * URIError with status 400 (src/http/errors.ts answers it).
 */
function decodeParameter(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch (error) {
    if (error instanceof URIError) Object.assign(error, { status: 400 });
    throw error;
  }
}

/**
 * The operations by method and number of segments. Paths match as express's routes matched them:
 * in any case, with one optional trailing slash, on the raw (undecoded) path, a parameter being one
 * or more characters other than `/`; HEAD is served by the GET operation of the path.
 */
export class OperationTable {
  readonly #routes = new Map<string, CompiledRoute[]>();
  /** Every method's, by number of segments. */
  readonly #anyMethod = new Map<number, CompiledRoute[]>();

  constructor(routes: readonly OperationRoute[]) {
    for (const route of routes) {
      const segments = segmentsOf(route.operation.path);
      const key = `${route.operation.method.toUpperCase()} ${segments.length}`;
      const list = this.#routes.get(key) ?? [];
      const compiled = { ...route, segments };
      list.push(compiled);
      this.#routes.set(key, list);
      const sized = this.#anyMethod.get(segments.length) ?? [];
      sized.push(compiled);
      this.#anyMethod.set(segments.length, sized);
    }
  }

  /** The first operation (in the contract's order) whose method and path match, with its parameters. */
  match(
    method: string,
    pathname: string,
  ): { route: OperationRoute; params: Record<string, string> } | undefined {
    const path = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
    if (!path.startsWith('/')) return undefined;
    const parts = path.split('/');
    const size = parts.length - 1;
    for (const route of this.#routes.get(`${method === 'HEAD' ? 'GET' : method} ${size}`) ?? []) {
      const params = matchSegments(route.segments, parts);
      if (params !== undefined) return { route, params };
    }
    // The router decoded the parameters of any route whose path matched, whatever its method: a
    // path that cannot be decoded is a 400 whether or not the method is the path's.
    for (const route of this.#anyMethod.get(size) ?? []) matchSegments(route.segments, parts);
    return undefined;
  }
}

function matchSegments(
  segments: readonly Segment[],
  parts: readonly string[],
): Record<string, string> | undefined {
  let params: Record<string, string> | undefined;
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index] as Segment;
    const part = parts[index + 1] as string;
    if ('literal' in segment) {
      if (part.length !== segment.literal.length || part.toLowerCase() !== segment.literal) return undefined;
    } else {
      if (part === '') return undefined;
      params ??= {};
      params[segment.parameter] = part;
    }
  }
  if (params === undefined) return {};
  // Decoded only once the whole path has matched, as the router does.
  for (const name of Object.keys(params)) params[name] = decodeParameter(params[name] as string);
  return params;
}

/**
 * Runs `stages` in order; `done` gets what the last one passes on (nothing, or an error) — or the
 * first error any of them passes, throws or rejects with.
 */
export function runStages(
  stages: readonly RequestHandler[],
  req: Request,
  res: Response,
  done: (error?: unknown) => void,
): void {
  let index = 0;
  const next: NextFunction = (error?: unknown) => {
    if (error !== undefined && error !== null) {
      done(error);
      return;
    }
    const stage = stages[index++];
    if (stage === undefined) {
      done();
      return;
    }
    try {
      const result: unknown = stage(req, res, next);
      if (result instanceof Promise)
        result.then(undefined, (rejected: unknown) => next(rejected ?? new Error('Rejected promise')));
    } catch (thrown) {
      next(thrown ?? new Error('Thrown'));
    }
  };
  next();
}

/** The operation each request in flight was matched to (the metrics and the rate limiter's exemptions read it). */
const matched = new WeakMap<Request, ContractOperation>();

/**
 * The operation of the contract whose method and path this request matched, known before the
 * first app stage runs; undefined for a request no operation takes (or one that did not come
 * through a pipeline).
 */
export function matchedOperation(req: Request): ContractOperation | undefined {
  return matched.get(req);
}

export interface Pipeline {
  /** Every request's stages, in order, before its operation's. */
  before: readonly RequestHandler[];
  operations: OperationTable;
  /** The stages of a request no operation took: the answer for an unknown path or method. */
  unmatched: readonly RequestHandler[];
  /** Answers whatever error a stage passed on. */
  onError: ErrorRequestHandler;
}

/**
 * Makes `app` serve requests through `pipeline` instead of its router. The app stays what users of
 * it know — its settings, its request and response prototypes (src/http/server.ts), `listen` — but
 * handling a request is this.
 */
export function servePipeline(app: Express, pipeline: Pipeline): void {
  const { before, operations, unmatched, onError } = pipeline;
  const fail = (error: unknown, req: Request, res: Response) => {
    try {
      onError(error, req, res, () => undefined);
    } catch {
      res.destroy();
    }
  };
  const afterOperations = (req: Request, res: Response) =>
    runStages(unmatched, req, res, (error) => {
      // The last unmatched stage always answers or fails; nothing passes beyond it.
      fail(error ?? new Error('No stage answered the request'), req, res);
    });
  // express's own entry (every request of `app(req, res)` and of `app.listen` goes through it).
  (app as Express & { handle: (req: Request, res: Response) => void }).handle = (req, res) => {
    // Requests born with the app's prototypes (src/http/server.ts) already have them: then this is
    // no change. A server the app was handed to directly (tests' supertest) makes node's own.
    if (Object.getPrototypeOf(req) !== app.request) Object.setPrototypeOf(req, app.request);
    if (Object.getPrototypeOf(res) !== app.response) Object.setPrototypeOf(res, app.response);
    req.res = res;
    res.req = req;
    res.locals = Object.create(null) as Response['locals'];
    req.baseUrl = '';
    req.originalUrl = req.url;
    req.params = {};
    // Matched once, before the app stages, which may name the request by its operation; a path
    // that cannot be decoded fails only after them, so that it is logged and counted as any other.
    let found: ReturnType<OperationTable['match']>;
    let undecodable: unknown;
    try {
      found = operations.match(req.method, req.path);
    } catch (decoding) {
      undecodable = decoding;
    }
    if (found !== undefined) matched.set(req, found.route.operation);
    runStages(before, req, res, (error) => {
      if (error !== undefined) return fail(error, req, res);
      if (undecodable !== undefined) return fail(undecodable, req, res);
      if (found === undefined) return afterOperations(req, res);
      req.params = found.params;
      runStages(found.route.stages, req, res, (failed) => {
        if (failed !== undefined) return fail(failed, req, res);
        afterOperations(req, res);
      });
    });
  };
}
