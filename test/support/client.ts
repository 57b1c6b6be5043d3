import type { AddressInfo } from 'node:net';
import { type CmsClient, type CmsCredentials, createCmsClient } from '../../client/src/index.ts';
import { createHttpServer } from '../../src/http/server.ts';
import type { TestApp } from './app.ts';

/*
 * Tests call the service through the typed client (client/src), the one published for users: it is
 * typed from the contract's generated `paths`, so a test that sends a field the contract lacks, or
 * reads one a response does not have, fails to compile. The client speaks real HTTP, so the app
 * listens on an ephemeral port of the loopback interface for the duration of a test file.
 */

export interface TypedClient {
  /** A client that sends the API key given to startClient. */
  client: CmsClient;
  /** Another client on the same server, with other credentials or none. */
  clientAs(credentials: CmsCredentials): CmsClient;
  baseUrl: string;
  /** Stops listening and drops open connections; call it before TestApp.close(). */
  close(): Promise<void>;
}

export async function startClient(app: Pick<TestApp, 'app'>, apiKey?: string): Promise<TypedClient> {
  const server = createHttpServer(app.app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const clientAs = (credentials: CmsCredentials) => createCmsClient({ baseUrl, ...credentials });
  return {
    client: clientAs(apiKey === undefined ? {} : { apiKey }),
    clientAs,
    baseUrl,
    async close() {
      const closed = new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
      // fetch keeps connections alive; close() alone would wait for them to time out.
      server.closeAllConnections();
      await closed;
    },
  };
}
