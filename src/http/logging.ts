import { randomUUID } from 'node:crypto';
import { IncomingMessage, type ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import type { RequestHandler } from 'express';
import type { Level, Logger } from 'pino';
// Its declarations type `req.log` and `req.id`, which requestLogging below sets.
import type {} from 'pino-http';
import { describeError, JWT_LIKE, KEY_LIKE, REDACTED } from '../errorSummary.ts';

// Below the HTTP layer (the shared state logs errors too); exported here as well for the pipeline.
export { describeError, type ErrorSummary, REDACTED, sanitizeMessage } from '../errorSummary.ts';

/*
 * Request logging that can never leak a credential: requests are serialised by hand from an
 * allow-list shape (no body, no parsed query), secret headers are replaced, the query parameters
 * that may carry a secret are cut out of the logged URL, and anything shaped like one of the
 * service's own secrets (an API key, an access token, a captcha token), wherever a client put it —
 * another header, a path segment, `;apiKey=`, `?key=`, percent-encoded or not — is replaced in every
 * logged URL and header (docs/security/requests.md). Errors are reduced to name, code and one
 * sanitised line.
 */

/**
 * Header names that say they carry a credential, whichever service they were meant for:
 * X-SS-API-KEY, Authorization, Proxy-Authorization, Cookie, Set-Cookie, and `X-Api-Key`,
 * `X-Auth-Token`, `X-Session-Id` and the like.
 */
const SECRET_HEADER_NAME = /api-?key|token|secret|passw|auth|cookie|session/i;
/**
 * Query parameter names, lowercased and reduced to letters and digits, that may carry a secret; and
 * `queryString` (stl/sqlContents), which holds SQL up to 10,000 characters: logs carry neither.
 */
const SECRET_QUERY_NAMES = ['apikey', 'accesstoken', 'token', 'password', 'querystring'];

/**
 * The name as the app's query parser reads it (express's "simple" parser is node's querystring):
 * `+` is a space, and valid %XX sequences are decoded even beside invalid ones (`api%4Bey%zz`).
 */
function decodedName(raw: string): string {
  return querystring.unescape(raw.replaceAll('+', ' '));
}

function isSecretName(raw: string): boolean {
  // Judged on the decoded name, in every spelling a parser might accept: `%61piKey`, `api_key`,
  // `apiKey[]`, and `apiKey%3D<key>` (a name that swallowed its own value).
  const reduced = decodedName(raw)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
  return SECRET_QUERY_NAMES.some((name) => reduced.startsWith(name));
}

/**
 * The URL with every query parameter that may carry a secret replaced, name and value, and every
 * part shaped like a secret of the service replaced (see redactSecretShapes).
 */
export function redactUrl(url: string): string {
  return redactSecretShapes(redactQueryNames(url));
}

function redactQueryNames(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const parts = url
    .slice(start + 1)
    .split('&')
    .map((part) => {
      const name = part.split('=', 1)[0] ?? '';
      if (!isSecretName(name)) return part;
      // A plain name is kept for the reader; an encoded one may itself hold the secret.
      return /^[A-Za-z_]+$/.test(name) ? `${name}=${REDACTED}` : REDACTED;
    });
  return `${url.slice(0, start)}?${parts.join('&')}`;
}

function redactHeaderValue(value: unknown): unknown {
  if (typeof value === 'string') return redactSecretShapes(value);
  if (Array.isArray(value)) return value.map(redactHeaderValue);
  return value;
}

function redactHeaders(headers: IncomingMessage['headers'] | ReturnType<ServerResponse['getHeaders']>) {
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    copy[name] = SECRET_HEADER_NAME.test(name) ? REDACTED : redactHeaderValue(value);
  }
  return copy;
}

/** The captcha cookie's signed token (src/domain/captcha/token.ts): `v1.<claims>.<signature>`. */
const CAPTCHA_LIKE = /v1\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g;
const SECRET_SHAPES = [KEY_LIKE, JWT_LIKE, CAPTCHA_LIKE];

/** What separates the parts of a URL or a header value; a secret never holds one of these. */
const PART_SEPARATORS = /([/?&;=,:@#\s"'<>()[\]{}|\\]+)/;

function hasSecretShape(text: string): boolean {
  return SECRET_SHAPES.some((shape) => {
    shape.lastIndex = 0;
    return shape.test(text);
  });
}

/**
 * The text with every part (between URL and header separators) that holds something shaped like
 * a secret of the service replaced as a whole: judged on the part as written and as percent-decoded
 * (`cms%5F…`), so that no encoding lets one through.
 */
export function redactSecretShapes(text: string): string {
  // Every shape has a fixed marker: most texts are let through on one look.
  if (!/cms_|eyJ|%|\+/i.test(text)) return text;
  return text
    .split(PART_SEPARATORS)
    .map((part, index) =>
      index % 2 === 0 && part !== '' && (hasSecretShape(part) || hasSecretShape(decodedName(part)))
        ? REDACTED
        : part,
    )
    .join('');
}
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

type Request = IncomingMessage & { originalUrl?: string; id?: unknown; ip?: string };

function loggedUrl(req: Request): string {
  return redactUrl(req.originalUrl ?? req.url ?? '');
}

function serializeRequest(req: Request) {
  return {
    id: req.id,
    method: req.method,
    url: loggedUrl(req),
    headers: redactHeaders(req.headers),
    // The client's address as TRUST_PROXY resolves it (express's req.ip), the peer's without express.
    remoteAddress: req.ip ?? req.socket?.remoteAddress,
  };
}

function serializeResponse(res: ServerResponse) {
  return { statusCode: res.statusCode, headers: redactHeaders(res.getHeaders()) };
}

/** The app's logger with the safe serialisers, for log lines written outside a request too. */
export function safeLogger(logger: Logger): Logger {
  return logger.child(
    {},
    { serializers: { err: describeError, req: serializeRequest, res: serializeResponse } },
  );
}

const PROBES = new Set(['/healthz', '/readyz']);

function requestIdOf(req: IncomingMessage): string {
  // A caller's correlation id is kept when it is harmless; it is echoed back either way.
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

function levelOf(req: IncomingMessage, res: ServerResponse, error: unknown): Level {
  if (error !== undefined || res.statusCode >= 500) return 'error';
  // Orchestrators poll these every few seconds; successful polls would drown everything else.
  const path = (req.url ?? '').split('?')[0] ?? '';
  if (PROBES.has(path) && res.statusCode < 400) return 'debug';
  return 'info';
}

/** The logger a request's `log` is bound from, and the bound one once made (see requestLog). */
const REQUEST_LOGGER = Symbol('requestLogger');
const BOUND_LOGGER = Symbol('boundLogger');

type LoggedRequest = Request & { [REQUEST_LOGGER]?: Logger; [BOUND_LOGGER]?: Logger | undefined };

/**
 * `req.log` as one accessor on the requests' prototype (express's per-app request object), which
 * makes the bound logger on first use from what the middleware left on the request. Defining an
 * accessor on each request instead (Object.defineProperty) gave each request a hidden class of its
 * own, a slower object for every stage after it (bench/RUNTIME.md, "Get one, the request path").
 */
const requestLog: PropertyDescriptor = {
  configurable: true,
  enumerable: true,
  get(this: LoggedRequest): Logger | undefined {
    const base = this[REQUEST_LOGGER];
    if (base === undefined) return undefined;
    this[BOUND_LOGGER] ??= base.child({ req: this });
    return this[BOUND_LOGGER];
  },
  set(this: LoggedRequest, value: Logger) {
    this[BOUND_LOGGER] = value;
  },
};
// Not shared state: marks request prototypes already given req.log, collected with them.
const withRequestLog = new WeakSet<object>();

/**
 * One line per request when it ends (`info`; `error` for a 5xx or a failed response; `debug` for
 * successful probes), with the request, the response and its time, and `req.log`: a logger bound to
 * the request, for the handlers and the error handler.
 *
 * This does what pino-http did, lazily: pino-http bound a child logger to every request up front,
 * and pino serialises a child's bindings when it is made, so every request paid for its headers'
 * redaction and JSON text (a large share of a get-one's CPU: bench/RUNTIME.md, "Get one, the
 * request path") even when, at the usual `warn` level, no line about it is ever written. Here the
 * request's logger is made on its first use, and the closing line only when its level is enabled.
 */
export function requestLogging(logger: Logger): RequestHandler {
  const base = safeLogger(logger);
  return (req, res, next) => {
    const id = requestIdOf(req);
    req.id = id;
    res.setHeader('X-Request-Id', id);
    const start = Date.now();
    // Under express the prototype is the app's own request object; a bare node request (no app)
    // gets the accessor on itself, so that node's own prototype is never changed.
    const prototype = Object.getPrototypeOf(req) as object | null;
    if (prototype === null || prototype === IncomingMessage.prototype) {
      Object.defineProperty(req, 'log', requestLog);
    } else if (!withRequestLog.has(prototype)) {
      Object.defineProperty(prototype, 'log', requestLog);
      withRequestLog.add(prototype);
    }
    const logged = req as LoggedRequest;
    logged[REQUEST_LOGGER] = base;
    logged[BOUND_LOGGER] = undefined;
    const done = (error?: Error) => {
      res.removeListener('close', done);
      res.removeListener('finish', done);
      res.removeListener('error', done);
      const level = levelOf(req, res, error);
      if (!base.isLevelEnabled(level)) return;
      const responseTime = Date.now() - start;
      const log = req.log;
      if (error !== undefined || res.statusCode >= 500) {
        const err = error ?? new Error(`failed with status code ${res.statusCode}`);
        log[level]({ res, err, responseTime }, `${req.method} ${loggedUrl(req)} ${res.statusCode}`);
      } else {
        log[level](
          { res, responseTime },
          `${req.method} ${loggedUrl(req)} ${res.statusCode} ${responseTime}ms`,
        );
      }
    };
    res.on('close', done);
    res.on('finish', done);
    res.on('error', done);
    next();
  };
}
