import { createServer, type RequestListener, type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
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
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** How often Node checks the two request timeouts. */
  checkIntervalMs: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
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

export function createHttpServer(app: RequestListener, limits: ServerLimits = DEFAULT_SERVER_LIMITS): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    app,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.on('clientError', refuse);
  return server;
}
