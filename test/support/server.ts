import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { createHttpServer, DEFAULT_SERVER_LIMITS, type ServerLimits } from '../../src/http/server.ts';

/** An app behind the service's own HTTP server, on a free port: for raw sockets, fetch and browsers. */
export interface Listening {
  server: Server;
  port: number;
  /** `http://<host>:<port>`, no trailing slash. */
  base: string;
  close(): Promise<void>;
}

/** Short limits, so that a body that never arrives is cut off within a test's patience. */
export const SHORT_LIMITS: ServerLimits = {
  headersTimeoutMs: 2_000,
  requestTimeoutMs: 3_000,
  keepAliveTimeoutMs: 2_000,
  checkIntervalMs: 100,
};

export async function listen(
  app: Express,
  limits: ServerLimits = DEFAULT_SERVER_LIMITS,
  host = '127.0.0.1',
): Promise<Listening> {
  const server = createHttpServer(app, limits);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    base: `http://${host}:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
