import { principalName } from '../../domain/principal.ts';
import { MAX_QUERY_LENGTH, runSqlContent } from '../../domain/stl/sql/sandbox.ts';
import type { Handler } from '../types.ts';

// The first row of stl/sqlContents' query, in the same sandbox of the service's own database.
export const stlSqlContent: Handler<'stlSqlContent'> = async ({ query, principal }, { config, sandbox }) => ({
  value: await runSqlContent(
    sandbox,
    query.queryString,
    {
      maxRows: 1,
      maxBytes: config.stlSqlMaxBytes,
      timeoutMs: config.stlSqlTimeoutMs,
      maxLength: MAX_QUERY_LENGTH,
    },
    principalName(principal),
  ),
});
