import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type {
  OpenApiRequestHandler,
  OpenApiRequestMetadata,
} from 'express-openapi-validator/dist/framework/types.js';
import type { ContractOperation } from '../contract.ts';
import { objectMaker } from '../objectLiterals.ts';

/*
 * express-openapi-validator's stages, run inside each operation's route. Its metadata stage finds
 * the request's operation by compiling every path of the contract into a regular expression and
 * trying them in turn — on every request (bench/RUNTIME.md, "Get one, the request path"). Inside an
 * operation's route the router has already matched that operation, so after the stage has run
 * once for it, its result (the operation's schema, as the validator prepared it) is kept and set
 * on later requests with the router's path parameters; the stages that validate run as before.
 * The stage is recognised by its name; if a version of the validator names it otherwise, every
 * stage simply runs as it is (slower, never weaker).
 */

/** What the metadata stage sets that is the same for every request of one operation and method. */
type OperationMetadata = Omit<OpenApiRequestMetadata, 'pathParams'>;

type MetadataRequest = Request & { openapi?: OpenApiRequestMetadata };

const METADATA_STAGE = 'metadataMiddleware';
/** Installs the validator's path parameter handlers on the first request; then only waits for the document. */
const PATH_PARAMS_STAGE = 'pathParamsMiddleware';
/** Checks security schemes when the validator is asked to (validateSecurity); otherwise only waits for the document. */
const SECURITY_STAGE = 'securityMiddleware';

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

/**
 * The validator's stages for one operation's route: its metadata stage replaced as described, its
 * path parameter stage passed by once it has run, and its security stage left out when the
 * validator does not check security (`securityValidated`: the authorization stage decides it).
 */
export function validationStages(
  validator: readonly OpenApiRequestHandler[],
  { securityValidated }: { securityValidated: boolean },
): (operation: ContractOperation) => RequestHandler[] {
  const pathParams = validator.map((stage) =>
    stage.name === PATH_PARAMS_STAGE ? untilPassed(stage) : stage,
  );
  const stages = pathParams.filter((stage) => securityValidated || stage.name !== SECURITY_STAGE);
  return (operation) =>
    stages.map((stage) =>
      stage.name === METADATA_STAGE
        ? operationMetadata(operation, stage as OpenApiRequestHandler)
        : (stage as RequestHandler),
    );
}
