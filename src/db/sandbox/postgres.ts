import type pg from 'pg';
import { SandboxUnavailable } from './errors.ts';
import type { ExecuteOptions, ExecuteOutcome, SqlExecutor } from './executor.ts';
import { SandboxGate } from './gate.ts';

/*
 * The database wall of stl/sqlContents on PostgreSQL. Each query runs on a connection of its own
 * small pool, inside
 *   BEGIN READ ONLY; SET LOCAL ROLE cms_stl_reader; SET LOCAL statement_timeout = …;
 *   DECLARE … CURSOR FOR <query>; FETCH <cap>; ROLLBACK
 * The role (made once by the operator, src/db/sandbox/role.ts; granted SELECT on the views by the
 * migration `stl_sql_views`) may read the three public views and nothing else, so a query
 * naming a private table fails in PostgreSQL itself with "permission denied". DECLARE accepts only a
 * query (no other statement kind, no data-modifying CTE), the extended protocol refuses a second
 * statement, and FETCH stops the cursor at the row cap instead of reading every row. The answer's
 * size is counted in PostgreSQL itself, row by row (a running sum of each row's text), and the
 * cursor fails as soon as it passes the cap, so an oversized answer never reaches the service.
 * Queries wait for a connection behind a gate (gate.ts), never in the pool.
 */

export const SANDBOX_ROLE = 'cms_stl_reader';

/** Connections of the sandbox's pool: as many queries run at once; some more may wait. */
export const POSTGRES_GATE = { capacity: 4, maxWaiting: 8, perCaller: 2 } as const;

/** The marker of the size cap's failure: part of the text the failing cast reports. */
const TOO_LARGE = 'cms_sandbox_answer_too_large';

/**
 * The query, with the running size of its answer beside each row (the last column, dropped before
 * the rows are answered); past the cap a cast of the marker fails. The cast depends on the row, so
 * that PostgreSQL cannot fold it into a constant and fail at planning time. The row is measured as
 * ROW(alias.*), never as the bare alias, which a column of the query named like it would replace.
 * The wrapping holds because the parser wall proved the text one SELECT without comments.
 */
function withSizeCap(sql: string, maxBytes: number): string {
  return [
    'SELECT cms_sandbox_sized.* FROM (',
    'SELECT cms_sandbox_query.*, sum(octet_length(ROW(cms_sandbox_query.*)::text)) OVER (ROWS UNBOUNDED PRECEDING) AS cms_sandbox_bytes',
    `FROM (\n${sql}\n) AS cms_sandbox_query) AS cms_sandbox_sized`,
    `WHERE CASE WHEN cms_sandbox_sized.cms_sandbox_bytes > ${maxBytes}`,
    `THEN CAST('${TOO_LARGE}:' || cms_sandbox_sized.cms_sandbox_bytes AS integer) = 0 ELSE true END`,
  ].join('\n');
}

/** SQLSTATEs: query_canceled (the statement timeout), insufficient_privilege, read_only_sql_transaction. */
const QUERY_CANCELED = '57014';
const REFUSALS = new Set(['42501', '25006']);
/** invalid_text_representation: how the size cap's cast fails. */
const INVALID_TEXT = '22P02';

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
  readonly gate = new SandboxGate(POSTGRES_GATE);

  constructor(private readonly databaseUrl: string) {}

  private poolOf(): Promise<pg.Pool> {
    this.pool ??= import('pg').then(({ default: driver }) => {
      const pool = new driver.Pool({
        connectionString: this.databaseUrl,
        max: POSTGRES_GATE.capacity,
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

  execute(sql: string, options: ExecuteOptions): Promise<ExecuteOutcome> {
    return this.gate.run(options.caller, options.timeoutMs, () => this.runOne(sql, options));
  }

  private async runOne(sql: string, options: ExecuteOptions): Promise<ExecuteOutcome> {
    const client = await (await this.poolOf()).connect();
    let broken = false;
    try {
      await client.query(options.databaseWall ? 'BEGIN READ ONLY' : 'BEGIN');
      if (options.databaseWall) {
        try {
          await client.query(`SET LOCAL ROLE ${SANDBOX_ROLE}`);
        } catch (error) {
          // Not the query's fault: the operator's one-time step is missing (the role, or the
          // service's membership of it); docs/security/sql-sandbox.md, "Roles".
          broken = true;
          throw new SandboxUnavailable(
            `the SQL sandbox's role ${SANDBOX_ROLE} is missing, or this service's role may not switch to it (run \`cms sandbox-role\`)`,
            { cause: error },
          );
        }
      }
      const timeout = options.timeoutMs === undefined ? 0 : Math.max(1, Math.round(options.timeoutMs));
      await client.query(`SET LOCAL statement_timeout = ${timeout}`);
      // queryMode is pg's (8.12+), missing from its typings: the extended protocol, one statement only.
      const { maxBytes } = options;
      const sized = maxBytes !== undefined;
      const query = sized ? withSizeCap(sql, maxBytes) : sql;
      const declare: pg.QueryConfig & { queryMode: 'extended' } = {
        text: `DECLARE sandbox_rows NO SCROLL CURSOR FOR\n${query}\n`,
        queryMode: 'extended',
      };
      await client.query(declare);
      const fetch = options.maxRows === undefined ? 'ALL' : String(options.maxRows);
      const result = await client.query({
        text: `FETCH FORWARD ${fetch} FROM sandbox_rows`,
        rowMode: 'array',
      });
      const columns = result.fields.map((field) => field.name);
      const rows = result.rows as unknown[][];
      if (sized) {
        columns.pop();
        for (const row of rows) row.pop();
      }
      return { status: 'ok', result: { columns, rows } };
    } catch (error) {
      if (error instanceof SandboxUnavailable) throw error;
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
      if (state === INVALID_TEXT && shortReason(error).includes(TOO_LARGE)) return { status: 'too-large' };
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
