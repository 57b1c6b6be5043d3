import { MAX_QUERY_LENGTH, runSqlContentsOn } from '../../domain/stl/sql/sandbox.ts';
import type { Handler } from '../types.ts';

// The sandbox of the service's own database; nothing in the request can name another one.
export const stlSqlContents: Handler<'stlSqlContents'> = async ({ query }, { config }) => ({
  value: await runSqlContentsOn(config.databaseUrl, query.queryString, {
    maxRows: config.stlSqlMaxRows,
    timeoutMs: config.stlSqlTimeoutMs,
    maxLength: MAX_QUERY_LENGTH,
  }),
});
