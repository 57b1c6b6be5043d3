import { type Request, type RequestHandler, type Response, Router } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db, DbProvider } from '../db/client.ts';
import type { Registry } from '../operations/registry.ts';
import type { OperationContext, OperationId } from '../operations/types.ts';
import { API_KEY_QUERY, principalOf } from './auth.ts';
import { type Contract, toExpressPath } from './contract.ts';

export interface Services {
  db: Db;
  provider: DbProvider;
  config: Config;
  logger: Logger;
}

/*
 * By the time a route runs, express-openapi-validator has checked credentials, parameters and body
 * against the contract, so the input is handed over as the handler's contract type without
 * re-parsing. The one erased signature below is where that guarantee is taken on trust.
 */
type ErasedHandler = (
  input: { path: unknown; query: unknown; body: unknown },
  context: OperationContext,
) => Promise<unknown>;

type ValidatedRequest = Request & { openapi?: { pathParams?: Record<string, unknown> } };

/** The credential is not an input of any operation. */
function operationQuery(req: Request): Record<string, unknown> {
  const { [API_KEY_QUERY]: _credential, ...query } = (req.query ?? {}) as Record<string, unknown>;
  return query;
}

function send(res: Response, output: unknown): void {
  if (typeof output === 'string') res.status(200).type('text/plain').send(output);
  else res.status(200).json(output);
}

function dispatch(handler: ErasedHandler, services: Services): RequestHandler {
  return async (req, res) => {
    const validated = req as ValidatedRequest;
    const output = await handler(
      { path: validated.openapi?.pathParams ?? {}, query: operationQuery(req), body: req.body },
      {
        db: services.db,
        provider: services.provider,
        config: services.config,
        principal: principalOf(req),
        log: req.log ?? services.logger,
      },
    );
    send(res, output);
  };
}

/** A router with one route per implemented operation, on the method and path the contract gives it. */
export function operationRoutes(contract: Contract, registry: Registry, services: Services): Router {
  const router = Router();
  for (const { operationId, method, path } of contract.operations) {
    const handler = registry[operationId as OperationId] as ErasedHandler | undefined;
    if (handler === undefined) continue;
    router[method](toExpressPath(path), dispatch(handler, services));
  }
  return router;
}
