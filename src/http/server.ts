import { createServer, IncomingMessage, type Server, ServerResponse, STATUS_CODES } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { problem } from './problem.ts';

/*
 * The HTTP server around the app, with limits suited to an API: a client gets a few seconds for its
 * headers and a bounded time for the whole request, so a slow or stalled connection cannot hold a
 * socket for minutes. What Node itself refuses (malformed HTTP, oversized headers, timeouts) gets
 * a problem+json body like every other error, not an empty one.
 */

export interface ServerLimits {
  /** Time to receive the request line and headers. */
  headersTimeoutMs: number;
  /** Time to receive the whole request, body included. */
  requestTimeoutMs: number;
  /**
   * How long an idle keep-alive connection stays open. Clients are told the whole seconds below it
   * (`Keep-Alive: timeout=5` for 5,900 ms): a client that honours the hint (undici, Node's agent)
   * closes an idle connection before the server does, so it never sends a request on a connection
   * the server is closing at that moment (HTTP/1.1's keep-alive race).
   */
  keepAliveTimeoutMs: number;
  /** How often Node checks the two request timeouts. */
  checkIntervalMs: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_900,
  checkIntervalMs: 1_000,
};

/** The status Node's own refusal stands for. */
function statusOf(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADERS_TIMEOUT') return 408;
  return 400;
}

const DETAILS: Record<number, string> = {
  400: 'The request is not valid HTTP',
  408: 'The request did not arrive in time',
  431: 'The request line or headers are too large',
};

function refuse(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A client that went away, or a response already under way, gets nothing more.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = statusOf(error.code);
  const body = JSON.stringify(problem(status, DETAILS[status] ?? 'The request was refused'));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/problem+json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

interface AppClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

// Not shared state: each app's classes, collected with the app.
const classesOfApp = new WeakMap<Express, AppClasses>();

/**
 * node:http's request and response classes, making objects born with the app's request and response
 * prototypes rather than node's own. express gives every request and response its app's prototype
 * (`Object.setPrototypeOf(req, app.request)`) when it handles them; done to an object node has just
 * built, that change leaves each request and response with a shape of its own in V8, and every later
 * property access on them (express's, the validator's, ours) misses its inline caches. So each is
 * built by a subclass of node's own whose prototype, put in front of the app's, becomes the app's
 * prototype: express's change to the same prototype changes nothing. Subclasses rather than plain
 * functions that call node's constructors: V8 sizes an object from its constructor's chain, and one
 * built by a bare function got too little room in the object for node's own fields and was turned
 * into a slow dictionary of properties — every response, and the request once stages added theirs
 * (bench/RUNTIME.md, "Requests born with the app's prototypes"). Made once per app.
 */
function classesFor(app: Express): AppClasses {
  const made = classesOfApp.get(app);
  if (made !== undefined) return made;
  class AppRequest extends IncomingMessage {}
  class AppResponse extends ServerResponse {}
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  // They are the app's prototypes, in front of its own: typed as what they inherit.
  app.request = AppRequest.prototype as unknown as Express['request'];
  app.response = AppResponse.prototype as unknown as Express['response'];
  const classes: AppClasses = {
    IncomingMessage: AppRequest,
    // @types/node declares ServerResponse generic over its request; node passes the request it built.
    ServerResponse: AppResponse as typeof ServerResponse,
  };
  classesOfApp.set(app, classes);
  return classes;
}

/** Servers drainServer has been called on. */
// Not shared state: a mark on each server, collected with its server.
const draining = new WeakSet<Server>();

export function createHttpServer(app: Express, limits: ServerLimits = DEFAULT_SERVER_LIMITS): Server {
  const server = createServer(
    {
      ...classesFor(app),
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    app,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.on('clientError', refuse);
  // Ahead of the app: a request it answers at once (a refusal) has sent its headers when the app
  // returns, too late to ask for the connection to close. `shouldKeepAlive` makes node write
  // `Connection: close` and close the connection once the answer is out.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (draining.has(server)) res.shouldKeepAlive = false;
  });
  return server;
}

/**
 * Stops a server the way keep-alive clients do not notice: no new connections; a request that
 * arrives on an open connection is served and answered with `Connection: close`; an idle
 * connection is left to its keep-alive timeout, which clients that honour the `Keep-Alive` hint
 * beat (see keepAliveTimeoutMs). Closing idle connections at once, as node's `server.close()`
 * does, resets the request a client sends on one at that moment. Connections still open after
 * `graceMs` (a request that runs long) are cut. Resolves once every connection has closed.
 */
export function drainServer(server: Server, graceMs: number, onOverdue?: () => void): Promise<void> {
  draining.add(server);
  // net's close: stop accepting, and call back once the last connection has closed by itself.
  // node:cluster closes a worker's servers with `close()` when the supervisor disconnects the
  // worker: that close must drain as well, not close the idle connections.
  server.close = function drainingClose(this: Server, callback?: (error?: Error) => void) {
    NetServer.prototype.close.call(this, callback);
    return this;
  };
  return new Promise((resolve) => {
    const deadline = setTimeout(() => {
      onOverdue?.();
      server.closeAllConnections();
    }, graceMs);
    server.close(() => {
      clearTimeout(deadline);
      resolve();
    });
  });
}
