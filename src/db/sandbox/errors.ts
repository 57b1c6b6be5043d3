/**
 * The sandbox cannot reach its database (the SQLite file cannot be opened, the sandbox process died,
 * PostgreSQL refuses for reasons of its own). It carries the driver-adapter kind the HTTP layer
 * already answers with a 503 (src/db/databaseErrors.ts); never the query's fault, so never a 400.
 */
export class SandboxUnavailable extends Error {
  readonly kind = 'DatabaseNotReachable';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SandboxUnavailable';
  }
}
