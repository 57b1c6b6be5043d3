import type { Principal } from '../../domain/principal.ts';
import { MAX_QUERY_LENGTH, runSqlContents } from '../../domain/stl/sql/sandbox.ts';
import type { Handler } from '../types.ts';

/** Whose share of the sandbox a query takes: the key, administrator or user that asks. */
function callerOf(principal: Principal): string {
  switch (principal.kind) {
    case 'apiKey':
      return `apiKey:${principal.apiKeyId}`;
    case 'administrator':
      return `administrator:${principal.administratorId}`;
    case 'user':
      return `user:${principal.userId}`;
    case 'anonymous':
      return 'anonymous';
  }
}

// The sandbox of the service's own database; nothing in the request can name another one.
export const stlSqlContents: Handler<'stlSqlContents'> = async (
  { query, principal },
  { config, sandbox },
) => ({
  value: await runSqlContents(
    sandbox,
    query.queryString,
    {
      maxRows: config.stlSqlMaxRows,
      maxBytes: config.stlSqlMaxBytes,
      timeoutMs: config.stlSqlTimeoutMs,
      maxLength: MAX_QUERY_LENGTH,
    },
    callerOf(principal),
  ),
});
