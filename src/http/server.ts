import { createServer, IncomingMessage, type Server, ServerResponse, STATUS_CODES } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
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

/**
 * node:http's request and response constructors, making objects born with the app's request and
 * response prototypes rather than node's own. express gives every request and response its app's
 * prototype (`Object.setPrototypeOf(req, app.request)`) when it handles them; done to an object node
 * has just built, that change leaves each request and response with a shape of its own in V8, and
 * every later property access on them (express's, the validator's, ours) misses its inline caches:
 * a large share of a get-one's CPU (bench/RUNTIME.md, "Requests born with the app's prototypes"). Built by
 * these, they already have that prototype, and express's change to the same prototype changes
 * nothing. Node's constructors are run on the new object with `call`, with node's own arguments
 * (measured: `Reflect.construct` or a rest-parameter `apply` keep part of the cost). Should a later
 * Node declare them as classes (which cannot be called), node's own constructors are used as they are.
 */
function constructorsFor(app: Express): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  const callable = (base: typeof IncomingMessage | typeof ServerResponse) =>
    !Function.prototype.toString.call(base).startsWith('class');
  if (!callable(IncomingMessage) || !callable(ServerResponse)) return { IncomingMessage, ServerResponse };
  function AppRequest(this: IncomingMessage, socket: Socket): void {
    IncomingMessage.call(this, socket);
  }
  AppRequest.prototype = app.request;
  // Node passes the server's options (highWaterMark, …) as a second argument @types/node leaves out.
  const initResponse = ServerResponse as unknown as (
    this: ServerResponse,
    req: IncomingMessage,
    options?: object,
  ) => void;
  function AppResponse(this: ServerResponse, req: IncomingMessage, options?: object): void {
    initResponse.call(this, req, options);
  }
  AppResponse.prototype = app.response;
  return {
    IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof ServerResponse,
  };
}

/** Servers drainServer has been called on. */
// Not shared state: a mark on each server, collected with its server.
const draining = new WeakSet<Server>();

export function createHttpServer(app: Express, limits: ServerLimits = DEFAULT_SERVER_LIMITS): Server {
  const server = createServer(
    {
      ...constructorsFor(app),
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
