import { principalName } from '../../domain/principal.ts';
import { MAX_QUERY_LENGTH, runSqlContents } from '../../domain/stl/sql/sandbox.ts';
import type { Handler } from '../types.ts';

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
    principalName(principal),
  ),
});
