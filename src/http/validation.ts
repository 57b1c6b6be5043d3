import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type {
  OpenApiRequestHandler,
  OpenApiRequestMetadata,
} from 'express-openapi-validator/dist/framework/types.js';
import type { ContractOperation } from '../contract.ts';
import { objectMaker } from '../objectLiterals.ts';
import { RecentlyUsed } from '../recentlyUsed.ts';
import { API_KEY_QUERY } from './auth.ts';
import { jsonTextOf } from './bodies.ts';

/*
 * express-openapi-validator's stages, run inside each operation's route. Its metadata stage finds
 * the request's operation by compiling every path of the contract into a regular expression and
 * trying them in turn — on every request (bench/RUNTIME.md, "Get one, the request path"). Inside an
 * operation's route the router has already matched that operation, so after the stage has run
 * once for it, its result (the operation's schema, as the validator prepared it) is kept and set
 * on later requests with the router's path parameters. The request stage validates every request
 * whose input it has not let through before (keptVerdicts, below). The stages are recognised by
 * their names; if a version of the validator names them otherwise, every stage simply runs as it
 * is (slower, never weaker).
 */

/** What the metadata stage sets that is the same for every request of one operation and method. */
type OperationMetadata = Omit<OpenApiRequestMetadata, 'pathParams'>;

type MetadataRequest = Request & { openapi?: OpenApiRequestMetadata };

const METADATA_STAGE = 'metadataMiddleware';
/** Installs the validator's path parameter handlers on the first request; then only waits for the document. */
const PATH_PARAMS_STAGE = 'pathParamsMiddleware';
/** Checks security schemes when the validator is asked to (validateSecurity); otherwise only waits for the document. */
const SECURITY_STAGE = 'securityMiddleware';
/** Validates (and coerces) the request's parameters and body against the operation's schemas. */
const REQUEST_STAGE = 'requestMiddleware';

/**
 * The verdicts an app keeps, all operations together, come to at most this many UTF-16 units (each
 * weighs its key twice, for the key and the copies made from it): any caller may vary its URLs.
 */
const KEPT_VERDICT_UNITS = 1 << 20;

/** An input (URL, declared headers, a safe operation's body) longer than this is validated every time, not kept. */
const KEPT_KEY_UNITS = 2048;

function kept(operation: ContractOperation, metadata: OperationMetadata | undefined): boolean {
  return metadata?.schema.operationId === operation.operationId;
}

/** The metadata stage for one operation: the validator's own once, then what it found. */
function operationMetadata(operation: ContractOperation, stage: OpenApiRequestHandler): RequestHandler {
  const method = operation.method.toUpperCase();
  // What the stage found, made with a request's path parameters into one literal (objectMaker): a
  // spread of what was found cost microseconds a request.
  let metadataOf: ((pathParams: Record<string, string>) => OpenApiRequestMetadata) | undefined;
  return (req: MetadataRequest, res: Response, next: NextFunction) => {
    // HEAD also reaches a GET route; the validator answers it with its 405, every time.
    if (metadataOf !== undefined && req.method === method) {
      // One object, as the validator does: its coercion of req.params shows in openapi.pathParams,
      // which the dispatcher reads.
      const pathParams: Record<string, string> = {};
      // (A wildcard parameter would be a list; the contract's paths have none.)
      for (const [name, value] of Object.entries(req.params)) {
        pathParams[name] = Array.isArray(value) ? value.join('/') : value;
      }
      req.openapi = metadataOf(pathParams);
      req.params = pathParams;
      next();
      return;
    }
    stage(req, res, (error?: unknown) => {
      const metadata = req.openapi;
      if (
        error === undefined &&
        req.method === method &&
        metadata !== undefined &&
        kept(operation, metadata)
      ) {
        const { pathParams: _perRequest, ...same } = metadata;
        const names = Object.keys(same) as (keyof OperationMetadata)[];
        metadataOf = objectMaker(
          [...names, 'pathParams'],
          (index) => (index < names.length ? `parts[${index}]` : 'input'),
          names.map((name) => same[name]),
        );
      }
      next(error);
    });
  };
}

/**
 * A stage that, once it has let a request through, has nothing left to do but wait for the
 * document the validator loaded (which a later stage waits for as well): after that it is passed
 * by, a turn of the microtask queue fewer per request.
 */
function untilPassed(stage: OpenApiRequestHandler): RequestHandler {
  let passed = false;
  return (req, res, next) => {
    if (passed) return next();
    stage(req, res, (error?: unknown) => {
      if (error === undefined) passed = true;
      next(error);
    });
  };
}

/** What the request stage leaves on a request that it let through, as kept for its input. */
interface Verdict {
  query: Record<string, unknown>;
  pathParams: Record<string, unknown>;
  /** The declared headers' values, as coerced. */
  headers: Record<string, unknown>;
  /** A safe operation's body as the stage left it (undefined for an operation without one). */
  body: unknown;
  /** What it weighs in the kept verdicts (KEPT_VERDICT_UNITS). */
  weight: number;
}

/** A copy of a parameter's value as the validator left it: strings, numbers, booleans, lists, objects. */
function copyOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyOf);
  if (value === null || typeof value !== 'object') return value;
  const copy = Object.create(Object.getPrototypeOf(value)) as Record<string, unknown>;
  for (const [name, item] of Object.entries(value)) copy[name] = copyOf(item);
  return copy;
}

/**
 * The headers an operation declares as parameters (lower case, as node names them), when all it
 * takes is in its URL, those headers and — for a safe operation (`x-safe`, a query sent as a JSON
 * body) — its body: the validator's verdict on such a request, and what it coerces, follow from
 * them alone. Undefined for any other operation (a body that may change something, an upload, a
 * cookie).
 */
function inputHeaders(operation: ContractOperation): string[] | undefined {
  if (operation.multipartBody || (operation.hasBody && !operation.safe)) return undefined;
  const headers: string[] = [];
  for (const [name, location] of operation.parameters) {
    if (location === 'cookie') return undefined;
    if (location === 'header') headers.push(name.toLowerCase());
  }
  return headers;
}

/**
 * The request stage of an operation whose input is all in its URL, declared headers and (a safe
 * operation's) JSON body, with the verdicts on the inputs it let through kept: a read asked again
 * (a template-tag read on every view of a page, a list page polled) gets the query, path
 * parameters, headers and body the validator coerced for it, as copies, without being checked
 * again — what the stage would give, since nothing else goes in. A body is part of the input as
 * the text it was parsed from with its Content-Type (the stage checks the media type); a body
 * another reader took (compressed, another charset) has no text, and is checked every time. Kept
 * only when let through: a refused input is checked every time. A URL carrying an API key in its
 * query is never kept (no credential outlives its request in a kept key); other methods (HEAD on a
 * GET) go to the stage every time.
 */
function keptVerdicts(
  operation: ContractOperation,
  stage: RequestHandler,
  kept: RecentlyUsed<string, Verdict>,
): RequestHandler {
  const headers = inputHeaders(operation);
  if (headers === undefined) return stage;
  const method = operation.method.toUpperCase();
  const prefix = `${operation.operationId} `;
  const valuesOf = (req: Request) => headers.map((name) => req.headers[name] ?? null);
  // The URL alone when that is all the input (no list made: most reads); a body's text and its
  // media type when it has one.
  const keyOf = (req: Request): string | undefined => {
    if (!operation.hasBody)
      return prefix + (headers.length === 0 ? req.url : JSON.stringify([req.url, ...valuesOf(req)]));
    const text = jsonTextOf(req);
    if (text === undefined) return undefined;
    return prefix + JSON.stringify([req.url, req.headers['content-type'] ?? null, ...valuesOf(req), text]);
  };
  return (req: MetadataRequest, res, next) => {
    const key = req.method === method && req.openapi !== undefined ? keyOf(req) : undefined;
    const keep = key !== undefined && key.length <= KEPT_KEY_UNITS;
    const known = keep ? kept.get(key) : undefined;
    if (known !== undefined) {
      // As the stage leaves them: the query an own property of the request, the path parameters
      // coerced in the metadata's object (which is also req.params), the headers in req.headers.
      Object.defineProperty(req, 'query', { writable: true, value: copyOf(known.query) });
      const pathParams = (req.openapi as OpenApiRequestMetadata).pathParams as Record<string, unknown>;
      for (const name in known.pathParams) pathParams[name] = known.pathParams[name];
      for (const name in known.headers)
        (req.headers as Record<string, unknown>)[name] = copyOf(known.headers[name]);
      if (operation.hasBody) req.body = copyOf(known.body);
      next();
      return;
    }
    stage(req, res, (error?: unknown) => {
      const query = req.query as Record<string, unknown>;
      if (error === undefined && keep && !Object.hasOwn(query, API_KEY_QUERY)) {
        const coerced: Record<string, unknown> = {};
        for (const name of headers) if (name in req.headers) coerced[name] = copyOf(req.headers[name]);
        kept.set(key, {
          query: copyOf(query) as Record<string, unknown>,
          pathParams: { ...(req.openapi as OpenApiRequestMetadata).pathParams },
          headers: coerced,
          body: operation.hasBody ? copyOf(req.body) : undefined,
          weight: 2 * key.length,
        });
      }
      next(error);
    });
  };
}

/**
 * The validator's stages for one operation's route: its metadata stage replaced as described, its
 * path parameter stage passed by once it has run, its security stage left out when the validator
 * does not check security (`securityValidated`: the authorization stage decides it), and its
 * request stage keeping its verdicts for operations whose input is all in the URL, headers and a
 * safe operation's body.
 */
export function validationStages(
  validator: readonly OpenApiRequestHandler[],
  { securityValidated }: { securityValidated: boolean },
): (operation: ContractOperation) => RequestHandler[] {
  const pathParams = validator.map((stage) =>
    stage.name === PATH_PARAMS_STAGE ? untilPassed(stage) : stage,
  );
  const stages = pathParams.filter((stage) => securityValidated || stage.name !== SECURITY_STAGE);
  const verdicts = new RecentlyUsed<string, Verdict>(KEPT_VERDICT_UNITS, (verdict) => verdict.weight);
  return (operation) =>
    stages.map((stage) => {
      if (stage.name === METADATA_STAGE) return operationMetadata(operation, stage as OpenApiRequestHandler);
      if (stage.name === REQUEST_STAGE) return keptVerdicts(operation, stage as RequestHandler, verdicts);
      return stage as RequestHandler;
    });
}
