import type { Database } from 'better-sqlite3';
import { PUBLIC_VIEW_NAMES } from './catalog.ts';
import type { ExecuteOutcome } from './executor.ts';

/*
 * The database wall of stl/sqlContents on SQLite, run inside the sandbox process on its read-only
 * connection (PRAGMA query_only = 1). Before a statement runs, its bytecode (EXPLAIN) is read: every
 * b-tree it opens (OpenRead's root page, mapped through sqlite_schema) must belong to a table that
 * the public views themselves read, every virtual table it opens must be one the views open
 * (json_each), and no opcode may touch the schema, settings or files. A private table reached by
 * any trick (a quoted or differently cased name, a sub-select, the schema table) shows up here.
 */

interface Instruction {
  opcode: string;
  p2: number;
  p3: number;
  p4: string | null;
}

/** Opcodes a read of the views never needs: schema and settings access, writes, maintenance. */
const DENIED_OPCODES = new Set([
  'OpenWrite',
  'ReadCookie',
  'SetCookie',
  'Vacuum',
  'IncrVacuum',
  'JournalMode',
  'Pagecount',
  'MaxPgcnt',
  'ParseSchema',
  'SqlExec',
  'LoadAnalysis',
  'Destroy',
  'Clear',
  'CreateBtree',
  'DropTable',
  'DropIndex',
  'DropTrigger',
  'IntegrityCk',
  'Checkpoint',
  'Expire',
  'TableLock',
  'VCreate',
  'VDestroy',
  'VUpdate',
  'VRename',
  'VBegin',
]);

/** Functions the wall refuses even if a query reached them: they load code or read files. */
const DENIED_FUNCTIONS = /^(load_extension|readfile|writefile|edit|fts3_tokenizer)\(/i;

function explain(db: Database, sql: string): Instruction[] {
  return db.prepare(`EXPLAIN ${sql}`).all() as Instruction[];
}

interface Allowed {
  /** Root pages of the tables the views read, and of their indexes. */
  pages: Set<number>;
  /** Virtual tables the views open (as EXPLAIN shows them: `vtab:<address>`, fixed per connection). */
  virtualTables: Set<string>;
  /** Root page → name, to say what a refused statement tried to open. */
  names: Map<number, string>;
}

/** Derived from the views' own bytecode, so that it follows the migrations without a second list. */
function allowedObjects(db: Database): Allowed {
  const schema = db.prepare('SELECT rootpage, tbl_name FROM sqlite_schema WHERE rootpage > 0').all() as {
    rootpage: number;
    tbl_name: string;
  }[];
  const names = new Map(schema.map((row) => [row.rootpage, row.tbl_name]));
  const tables = new Set<string>();
  const virtualTables = new Set<string>();
  for (const view of PUBLIC_VIEW_NAMES) {
    for (const op of explain(db, `SELECT * FROM "${view}"`)) {
      if (op.opcode === 'OpenRead') {
        const table = names.get(op.p2);
        if (table !== undefined) tables.add(table);
      }
      if (op.opcode === 'VOpen' && op.p4 !== null) virtualTables.add(op.p4);
    }
  }
  const pages = new Set(schema.filter((row) => tables.has(row.tbl_name)).map((row) => row.rootpage));
  return { pages, virtualTables, names };
}

/** The reason the wall refuses the statement, or undefined. */
export function checkBytecode(db: Database, sql: string): string | undefined {
  const allowed = allowedObjects(db);
  for (const op of explain(db, sql)) {
    if (op.opcode === 'OpenRead' || op.opcode === 'ReopenIdx') {
      if (op.p3 !== 0) return 'it opens a table of another database';
      if (!allowed.pages.has(op.p2)) {
        const name = op.p2 === 1 ? 'sqlite_schema' : (allowed.names.get(op.p2) ?? `page ${op.p2}`);
        return `it reads ${name}, which is not behind a public view`;
      }
    } else if (op.opcode === 'VOpen') {
      if (op.p4 === null || !allowed.virtualTables.has(op.p4)) return 'it opens a virtual table';
    } else if (op.opcode === 'Transaction') {
      if (op.p2 !== 0) return 'it would write';
    } else if (DENIED_OPCODES.has(op.opcode)) {
      return `it uses the ${op.opcode} operation`;
    } else if ((op.opcode === 'Function' || op.opcode === 'PureFunc') && DENIED_FUNCTIONS.test(op.p4 ?? '')) {
      return `it calls ${(op.p4 ?? '').replace(/\(.*$/, '')}()`;
    }
  }
  return undefined;
}

const shortReason = (error: unknown) =>
  ((error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '').slice(0, 200);

/**
 * The bytes a value adds to the answer, about as its JSON text has them: a string's UTF-8 length,
 * a blob's hexadecimal text, a number's digits. Counted here, in the sandbox process, so that an
 * answer past its cap never reaches the service.
 */
function sizeOf(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (value instanceof Uint8Array) return value.length * 2;
  if (value === null || value === undefined) return 4;
  return String(value).length;
}

export interface StatementLimits {
  maxRows: number | undefined;
  maxBytes: number | undefined;
}

/** Runs one statement: the walls, then the cursor, stopped at the row cap or the size cap. */
export function runStatement(
  db: Database,
  sql: string,
  limits: StatementLimits,
  databaseWall: boolean,
): ExecuteOutcome {
  const { maxRows, maxBytes } = limits;
  try {
    const statement = db.prepare(sql);
    if (!statement.reader)
      return { status: 'refused', reason: 'the statement returns no rows; only a query may run' };
    if (databaseWall) {
      const reason = checkBytecode(db, sql);
      if (reason !== undefined) return { status: 'refused', reason };
    }
    statement.raw(true).safeIntegers(true);
    const columns = statement.columns().map((column) => column.name);
    const rows: unknown[][] = [];
    let bytes = 0;
    if (maxRows === undefined || maxRows > 0) {
      for (const row of statement.iterate() as IterableIterator<unknown[]>) {
        if (maxBytes !== undefined) {
          for (const value of row) bytes += sizeOf(value);
          if (bytes > maxBytes) return { status: 'too-large' };
        }
        rows.push(row);
        if (maxRows !== undefined && rows.length >= maxRows) break;
      }
    }
    return { status: 'ok', result: { columns, rows } };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_READONLY' || code === 'SQLITE_AUTH')
      return { status: 'refused', reason: shortReason(error) };
    return { status: 'failed', reason: shortReason(error) };
  }
}
