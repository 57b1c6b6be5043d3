import type { Request } from 'express';

/*
 * express 5 parses the query string anew on every read of `req.query` (a getter on the request's
 * prototype). The stages that read the query before the validator sets its own coerced copy on the
 * request (integer parameters, NUL characters) take it from here: parsed once per request.
 */

// Not shared state: each request's own parse, collected with its request.
const parsed = new WeakMap<Request, Record<string, unknown>>();

/** The request's query as the app's parser reads it, parsed once per request. */
export function queryOnce(req: Request): Record<string, unknown> {
  let query = parsed.get(req);
  if (query === undefined) {
    query = req.query as Record<string, unknown>;
    parsed.set(req, query);
  }
  return query;
}
