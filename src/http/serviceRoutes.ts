import { existsSync, readFileSync } from 'node:fs';
import { type RequestHandler, Router } from 'express';
import type { Contract } from '../contract.ts';
import { fromRoot } from '../projectRoot.ts';
import { type Coding, PRECOMPRESSED_SUFFIX, StaticAsset } from './compression.ts';
import { problem, sendProblem } from './problem.ts';

/*
 * Routes that are not operations of the contract — the contract itself, its docs page — live here,
 * in one router mounted ahead of rate limiting, authorization and the validator, so they neither
 * fall into the validator's "no such operation" 404 nor need exceptions inside it. Add a route here,
 * not in app.ts, and list it in docs/api/README.md. (Metrics are not on the API port at all: they have a
 * listener of their own, src/http/metrics.ts, so /metrics here is a 404 like any unknown path.)
 */

/** The Redoc page `npm run docs` writes (also run by `npm ci` through `prepare`). */
export const DOCS_PAGE = fromRoot('docs', 'index.html');

/**
 * The page carries Redoc's scripts and styles inline and asks for no web font, so it works without
 * any network; the policy makes the browser refuse anything from elsewhere all the same.
 */
const DOCS_POLICY = [
  "default-src 'none'",
  "script-src 'self' 'unsafe-inline' blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
].join('; ');

export interface ServiceRouteOptions {
  /** Where the docs page is read from; the built page by default. */
  docsPage?: string;
}

/** The paths served here; every route below is one of them. */
export const SERVICE_PATHS = ['/openapi.yaml', '/openapi.json', '/favicon.ico', '/docs'] as const;

/**
 * The paths the router below can match, as its routes match them (the router's defaults: any case,
 * one optional trailing slash, the raw path). Every other request skips the router: entering a
 * router and leaving it again cost every API request a layer walk of its own (bench/RUNTIME.md,
 * "Get one, the request path").
 */
const MAY_MATCH = new RegExp(
  `^(?:${SERVICE_PATHS.map((path) => path.replaceAll('.', '\\.')).join('|')})/?$`,
  'i',
);

export function serviceRoutes(contract: Contract, options: ServiceRouteOptions = {}): RequestHandler {
  const router = Router();
  const [yamlPath, jsonPath, faviconPath, docsPath] = SERVICE_PATHS;
  const yaml = new StaticAsset(readFileSync(contract.file));
  const json = new StaticAsset(Buffer.from(JSON.stringify(contract.document)));
  router.get(yamlPath, (req, res) => {
    res.type('application/yaml; charset=utf-8');
    yaml.send(req, res);
  });
  router.get(jsonPath, (req, res) => {
    res.type('application/json; charset=utf-8');
    json.send(req, res);
  });
  // Browsers ask for it with every page; there is none, and a 404 would only fill the logs.
  router.get(faviconPath, (_req, res) => {
    res.status(204).end();
  });
  const docsPage = options.docsPage ?? DOCS_PAGE;
  // Read on the first request (a large file, not worth a start-up), then kept: the page changes only
  // with the contract, i.e. with a new build, which also writes it compressed (scripts/docs.ts).
  let docs: StaticAsset | undefined;
  router.get(docsPath, (req, res) => {
    docs ??= existsSync(docsPage)
      ? new StaticAsset(readFileSync(docsPage), builtBeside(docsPage))
      : undefined;
    if (docs === undefined) {
      sendProblem(res, problem(404, 'The docs page has not been built: run `npm run docs`'));
      return;
    }
    res.setHeader('Content-Security-Policy', DOCS_POLICY);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('text/html');
    docs.send(req, res);
  });
  return (req, res, next) => {
    if (MAY_MATCH.test(req.path)) router(req, res, next);
    else next();
  };
}

/** The compressed copies of a file the build wrote beside it, read when first asked for. */
function builtBeside(file: string): (coding: Coding) => Buffer | undefined {
  return (coding) => {
    const path = file + PRECOMPRESSED_SUFFIX[coding];
    return existsSync(path) ? readFileSync(path) : undefined;
  };
}
