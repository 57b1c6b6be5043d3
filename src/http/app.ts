import cookieParser from 'cookie-parser';
import express from 'express';
import { middleware as openApiValidator } from 'express-openapi-validator';
import { tokenSecretOf } from '../config.ts';
import { type Contract, contract as serviceContract } from '../contract.ts';
import { handlers as implemented, type Registry } from '../operations/registry.ts';
import { ApiKeyAuthenticator } from './apiKeys.ts';
import { Authenticator, authorize, KnownCredentials } from './auth.ts';
import { operationBody, unreadBodies } from './bodies.ts';
import { setCompression } from './compression.ts';
import { crossOrigin } from './cors.ts';
import { CredentialCache } from './credentialCache.ts';
import { errorHandler, notFound } from './errors.ts';
import { IdempotencyKeys } from './idempotency.ts';
import { strictIntegerParameters } from './integerParameters.ts';
import { requestLogging, safeLogger } from './logging.ts';
import { rejectNulCharacters } from './nulCharacters.ts';
import { matchedOperation, OperationTable, servePipeline } from './pipeline.ts';
import { exemptRequests, rateLimiting } from './rateLimit.ts';
import { operationRoutes } from './routes.ts';
import { SERVICE_PATHS, serviceRoutes } from './serviceRoutes.ts';
import type { Services } from './services.ts';
import { deferSpecValidator } from './specCheck.ts';
import { validationStages } from './validation.ts';

/** The app's own shape, for tests of the pipeline itself: other handlers, another contract. */
export interface AppShape {
  handlers?: Registry;
  /** Another contract than openapi/cms.yaml. */
  contract?: Contract;
}

/** The validator never checks security: the authorization stage has decided it before (src/http/auth.ts). */
const VALIDATES_SECURITY = false;

/** The validator's type for a document given as an object (contract.ts has checked its shape). */
type ParsedDocument = Exclude<Parameters<typeof openApiValidator>[0]['apiSpec'], string>;

/**
 * The validator's copy of the document, with every query parameter taking reserved characters as
 * they come. Its check for `allowReserved: false` refuses any raw `+ / ? : @ ! $ ' ( ) * , ;` in a
 * value — yet `+` is how URLSearchParams, browsers' forms and most clients write a space, and the
 * query parser decodes every value (`+` and `%XX` alike) before it is validated: what is checked is
 * the decoded value itself (docs/api/cors-and-query-strings.md).
 */
function withReservedCharactersAllowed(document: unknown): unknown {
  const allow = (owner: unknown) => {
    const parameters = (owner as { parameters?: unknown } | null)?.parameters;
    if (!Array.isArray(parameters)) return;
    for (const parameter of parameters as { in?: unknown; allowReserved?: boolean }[])
      if (parameter.in === 'query') parameter.allowReserved = true;
  };
  // Path items and their operations carry parameters (the document's $refs are resolved).
  for (const item of Object.values((document as { paths?: Record<string, object> }).paths ?? {})) {
    allow(item);
    for (const operation of Object.values(item)) if (typeof operation === 'object') allow(operation);
  }
  return document;
}

/**
 * How the service authenticates a request's credentials on these services: API keys by digest
 * (their use recorded in the background), tokens by the token secret; `known` learns the
 * credentials that succeed (the rate limiter's budgets), `cache` keeps them across nodes (Redis).
 */
export function serviceAuthenticator(
  services: Pick<Services, 'db' | 'reads' | 'background' | 'config' | 'logger'>,
  known: KnownCredentials,
  cache?: CredentialCache,
): Authenticator {
  const { db, reads, background, config, logger } = services;
  return new Authenticator({
    apiKeys: new ApiKeyAuthenticator(db, reads, background, logger),
    db,
    secret: tokenSecretOf(config),
    known,
    cache,
    userTokenScopes: config.accounts.userTokenScopes,
  });
}

/** The service's app on these services (src/compose.ts), which it uses and never closes. */
export function createApp(services: Services, shape: AppShape = {}): express.Express {
  const { config, state } = services;
  const contract = shape.contract ?? serviceContract;
  const logger = safeLogger(services.logger);
  const known = new KnownCredentials();
  // Only where reading the credentials generation is much cheaper than the lookup it saves: Redis.
  const cache =
    state.kind === 'redis' && config.credentialCacheSeconds > 0
      ? new CredentialCache(state, config.credentialCacheSeconds * 1000)
      : undefined;
  // Every node on Redis advances the generation, whether or not it caches itself.
  const generations = state.kind === 'redis' ? (cache ?? new CredentialCache(state, 0)) : undefined;
  const authenticator = serviceAuthenticator({ ...services, logger }, known, cache);

  const app = express();
  setCompression(app, config.compressMinBytes);
  app.disable('x-powered-by');
  // The client's address (`req.ip`) every per-address decision and the logs use: TRUST_PROXY.
  app.set('trust proxy', config.trustProxy);

  // The pipeline (src/http/pipeline.ts), in order; each stage is one module.
  const before = [
    ...(services.metrics ? [services.metrics.requests(matchedOperation)] : []),
    requestLogging(logger),
    unreadBodies(),
    // Before everything that may answer, so that every answer (a 401, a 429) can be read by a page.
    crossOrigin(contract, config.corsOrigin, SERVICE_PATHS),
    serviceRoutes(contract),
    rateLimiting({
      limit: config.rateLimitPerMinute,
      state,
      logger,
      known,
      exempt: exemptRequests(matchedOperation),
    }),
  ];
  // Without the document check (production), the validator must not compile the OpenAPI meta-schema.
  deferSpecValidator();
  const validator = openApiValidator({
    // The document contract.ts has already parsed and resolved (the validator works on its own
    // copy). Parsing the YAML again took a second of every start, and with $refs left in, the
    // validator compiled every component schema up front just to look each one up.
    apiSpec: withReservedCharactersAllowed(structuredClone(contract.resolved)) as ParsedDocument,
    $refParser: { mode: 'dereference' },
    // The contract is checked against the OpenAPI schema by `npm run lint:contract` and by every
    // non-production start (tests); in production it would lengthen each worker's start
    // (bench/RUNTIME.md, "Start-up").
    validateApiSpec: config.nodeEnv !== 'production',
    // coerceTypes stays unset: `true` would also coerce JSON bodies ("5" accepted for 5). Path and
    // query parameters are coerced regardless. The apiKey query parameter is allowed because it is
    // a security scheme of the operation (or of the document, for public operations). Security
    // itself was decided by the authorization stage, which runs before it.
    validateRequests: { allowUnknownQueryParameters: false },
    validateResponses: config.nodeEnv !== 'production',
    validateSecurity: VALIDATES_SECURITY,
    // Uploads are read by the body stage (src/http/bodies.ts), within their limit, after the
    // authorization stage; the validator's own reader (multer, in memory, unbounded) never runs.
    fileUploader: false,
  });
  const validation = validationStages(validator, { securityValidated: VALIDATES_SECURITY });
  // Cookies are read only by operations that declare a cookie parameter (the validator checks no
  // other cookie), so only their routes parse them.
  const cookies = cookieParser();
  const nulCharacters = rejectNulCharacters();
  const operations = new OperationTable(
    operationRoutes(
      contract,
      shape.handlers ?? implemented,
      { ...services, logger },
      generations && (() => generations.invalidate()),
      // Per operation, in order: authorization (before validation, so a caller without access learns
      // nothing about the operation's input rules; and before the body, so that a request turned
      // away costs no more than its headers: docs/security/requests.md), plain-digit integers,
      // cookies, the body (bounded, then checked for NUL characters with the query), then the contract.
      (operation) => {
        const integers = strictIntegerParameters(operation);
        return [
          authorize(operation, authenticator),
          ...(integers === undefined ? [] : [integers]),
          ...([...operation.parameters.values()].includes('cookie') ? [cookies] : []),
          operationBody(operation, nulCharacters, config.avatarMaxBytes),
          ...validation(operation),
        ];
      },
      new IdempotencyKeys(state, tokenSecretOf(config), config.idempotencyKeySeconds * 1000, logger),
    ),
  );
  servePipeline(app, {
    before,
    operations,
    // Only requests no operation matched: the validator answers an unknown path with its 404 and a
    // known path with another method with its 405 (and the Allow header).
    unmatched: [...validator, (req, _res, next) => next(notFound(req))],
    onError: errorHandler(logger, config.nodeEnv, contract),
  });
  return app;
}
