import type pg from 'pg';
import { SandboxUnavailable } from './errors.ts';
import type { ExecuteOptions, ExecuteOutcome, SqlExecutor } from './executor.ts';

/*
 * The database wall of stl/sqlContents on PostgreSQL. Each query runs on a connection of its own
 * small pool, inside
 *   BEGIN READ ONLY; SET LOCAL ROLE cms_stl_reader; SET LOCAL statement_timeout = …;
 *   DECLARE … CURSOR FOR <query>; FETCH <cap>; ROLLBACK
 * The role (migration `stl_sql_views`) may read the three public views and nothing else, so a query
 * naming a private table fails in PostgreSQL itself with "permission denied". DECLARE accepts only a
 * query (no other statement kind, no data-modifying CTE), the extended protocol refuses a second
 * statement, and FETCH stops the cursor at the row cap instead of reading every row.
 */

export const SANDBOX_ROLE = 'cms_stl_reader';

/** SQLSTATEs: query_canceled (the statement timeout), insufficient_privilege, read_only_sql_transaction. */
const QUERY_CANCELED = '57014';
const REFUSALS = new Set(['42501', '25006']);

/**
 * SQLSTATEs that are the server's condition, not the query's: connection exceptions (08), missing
 * database (3D), insufficient resources (53), operator intervention (57, but for the timeout),
 * system and internal errors (58, XX).
 */
function isServerCondition(state: string): boolean {
  return (
    state !== QUERY_CANCELED &&
    ['08', '3D', '53', '57', '58', 'XX'].some((prefix) => state.startsWith(prefix))
  );
}

/**
 * Numbers as numbers, whatever the type: count(*) is bigint and avg() numeric, which pg gives as
 * text by default; SQLite gives both as numbers. Timestamps a query computes stay PostgreSQL's text.
 */
function typesOf(driver: typeof pg) {
  return {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      const { builtins } = driver.types;
      if (oid === builtins.INT8 || oid === builtins.NUMERIC) return (text: string) => Number(text);
      if (oid === builtins.TIMESTAMP || oid === builtins.TIMESTAMPTZ || oid === builtins.DATE) {
        return (text: string) => text;
      }
      return format === 'binary'
        ? driver.types.getTypeParser(oid, 'binary')
        : driver.types.getTypeParser(oid, 'text');
    },
  };
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** The first line of the server's message, short: enough to fix the query, nothing more. */
function shortReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? '').slice(0, 200);
}

export class PostgresSandbox implements SqlExecutor {
  readonly dialect = 'postgresql' as const;
  /**
   * Made on the first sandboxed query, with pg loaded then: the sandbox is made with every worker
   * (src/db/sandbox/index.ts), and a SQLite service would load pg at its start for nothing.
   */
  private pool: Promise<pg.Pool> | undefined;

  constructor(private readonly databaseUrl: string) {}

  private poolOf(): Promise<pg.Pool> {
    this.pool ??= import('pg').then(({ default: driver }) => {
      const pool = new driver.Pool({
        connectionString: this.databaseUrl,
        max: 4,
        types: typesOf(driver),
        allowExitOnIdle: true,
        // A server that does not answer is a 503 (pg's own message), not a request left hanging.
        connectionTimeoutMillis: 5000,
      });
      // An idle connection the server ends (a restart, pg_terminate_backend, a dropped database)
      // is an 'error' event of the pool, which, unheard, would end the whole process. The pool has
      // already let that client go; the next query opens a fresh one, and its own failure (if the
      // server is really gone) is that request's 503.
      pool.on('error', () => undefined);
      return pool;
    });
    return this.pool;
  }

  async execute(sql: string, options: ExecuteOptions): Promise<ExecuteOutcome> {
    const client = await (await this.poolOf()).connect();
    let broken = false;
    try {
      await client.query(options.databaseWall ? 'BEGIN READ ONLY' : 'BEGIN');
      if (options.databaseWall) await client.query(`SET LOCAL ROLE ${SANDBOX_ROLE}`);
      const timeout = options.timeoutMs === undefined ? 0 : Math.max(1, Math.round(options.timeoutMs));
      await client.query(`SET LOCAL statement_timeout = ${timeout}`);
      // queryMode is pg's (8.12+), missing from its typings: the extended protocol, one statement only.
      const declare: pg.QueryConfig & { queryMode: 'extended' } = {
        text: `DECLARE sandbox_rows NO SCROLL CURSOR FOR\n${sql}\n`,
        queryMode: 'extended',
      };
      await client.query(declare);
      const fetch = options.maxRows === undefined ? 'ALL' : String(options.maxRows);
      const result = await client.query({
        text: `FETCH FORWARD ${fetch} FROM sandbox_rows`,
        rowMode: 'array',
      });
      return {
        status: 'ok',
        result: { columns: result.fields.map((field) => field.name), rows: result.rows as unknown[][] },
      };
    } catch (error) {
      const state = sqlState(error);
      // Not an answer of the server about the query (connection lost ...): the service's problem.
      if (state === undefined) {
        broken = true;
        throw error;
      }
      if (isServerCondition(state)) {
        broken = true;
        throw new SandboxUnavailable('the database cannot run sandboxed queries now', { cause: error });
      }
      if (state === QUERY_CANCELED) return { status: 'timeout' };
      if (REFUSALS.has(state)) return { status: 'refused', reason: shortReason(error) };
      return { status: 'failed', reason: shortReason(error) };
    } finally {
      try {
        if (!broken) await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    if (pool !== undefined) await (await pool).end();
  }
}
