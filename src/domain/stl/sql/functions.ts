import type { SqlDialect } from '../../../db/sandbox/executor.ts';

/*
 * Functions a sandboxed query may call: string, math, date and aggregate functions, nothing that
 * reads files, settings, the session or the catalog, sleeps, loads code, or makes a value whose
 * size a number in the query decides (printf/format widths, lpad/rpad, repeat, zeroblob,
 * randomblob, generate_series) or that grows with the rows read (string_agg, group_concat,
 * array_agg over a cross join). Names are compared in lower case. A function that one database
 * lacks fails there with a 400. docs/security/sql-sandbox.md lists the reasons.
 */

const COMMON = [
  // aggregates
  'count',
  'sum',
  'avg',
  'min',
  'max',
  // EXISTS (sub-select), which the parsers read as a function
  'exists',
  // window functions
  'row_number',
  'rank',
  'dense_rank',
  // strings
  'lower',
  'upper',
  'length',
  'substr',
  'substring',
  'trim',
  'ltrim',
  'rtrim',
  'replace',
  'coalesce',
  'nullif',
  'concat',
  'concat_ws',
  // math
  'abs',
  'round',
  'ceil',
  'ceiling',
  'floor',
  'mod',
  'power',
  'sqrt',
  'sign',
  // dates (keywords the parser reads as functions)
  'current_date',
  'current_time',
  'current_timestamp',
];

const BY_DIALECT: Record<SqlDialect, readonly string[]> = {
  sqlite: [
    'total',
    'ifnull',
    'instr',
    'char',
    'unicode',
    'hex',
    'typeof',
    'date',
    'time',
    'datetime',
    'julianday',
    'strftime',
    'unixepoch',
  ],
  postgresql: [
    'bool_and',
    'bool_or',
    'left',
    'right',
    'strpos',
    'position',
    'char_length',
    'character_length',
    'initcap',
    'split_part',
    'trunc',
    'greatest',
    'least',
    'now',
    'date_trunc',
    'date_part',
    'extract',
    'to_char',
    'to_date',
    'to_timestamp',
    'make_date',
    'age',
  ],
};

const ALLOWED: Record<SqlDialect, ReadonlySet<string>> = {
  sqlite: new Set([...COMMON, ...BY_DIALECT.sqlite]),
  postgresql: new Set([...COMMON, ...BY_DIALECT.postgresql]),
};

/**
 * The replacement of replace() is a string literal of at most this many characters (and the text
 * replaced a non-empty literal), so that one call grows its input at most this many times.
 */
const MAX_REPLACEMENT = 16;

/** Rules on the arguments of an allowed function; the reason of a refusal, or undefined. */
export function checkFunctionArguments(name: string, args: readonly unknown[]): string | undefined {
  if (name.toLowerCase() !== 'replace') return undefined;
  const literal = (value: unknown) => {
    const node = value as { type?: unknown; value?: unknown } | null;
    return node?.type === 'single_quote_string' && typeof node.value === 'string' ? node.value : undefined;
  };
  const from = literal(args[1]);
  const to = literal(args[2]);
  if (
    args.length !== 3 ||
    from === undefined ||
    from === '' ||
    to === undefined ||
    to.length > MAX_REPLACEMENT
  ) {
    return `calls replace() with other than a non-empty string literal to replace and a string literal of at most ${MAX_REPLACEMENT} characters to put in its place`;
  }
  return undefined;
}

/**
 * Operators a query may use: comparison, arithmetic, logic, LIKE and concatenation. Every other
 * operator calls a function of its own (`->>` reads JSON on SQLite, PostgreSQL has hundreds).
 */
const OPERATORS = new Set([
  '=',
  '<>',
  '!=',
  '<',
  '>',
  '<=',
  '>=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '||',
  'AND',
  'OR',
  'NOT',
  'IN',
  'NOT IN',
  'BETWEEN',
  'NOT BETWEEN',
  'IS',
  'IS NOT',
  'LIKE',
  'NOT LIKE',
  'ILIKE',
  'NOT ILIKE',
  'EXISTS',
  'NOT EXISTS',
]);

export function isAllowedOperator(operator: string): boolean {
  return OPERATORS.has(operator.toUpperCase());
}

/**
 * SQL keywords that are functions of the session: the role, the database, the schema, the time
 * zone's clock. Written without parentheses they look like column names to the parsers.
 */
const SESSION_KEYWORDS = new Set([
  'user',
  'current_user',
  'current_role',
  'session_user',
  'system_user',
  'current_catalog',
  'current_schema',
  'current_database',
  'localtime',
  'localtimestamp',
]);

export function isSessionKeyword(name: string): boolean {
  return SESSION_KEYWORDS.has(name.toLowerCase());
}

export function isAllowedFunction(dialect: SqlDialect, name: string): boolean {
  return ALLOWED[dialect].has(name.toLowerCase());
}

/** Types a CAST may name: plain scalars only (a cast to regclass or the like reads the catalog). */
const CAST_TYPES = new Set([
  'int',
  'integer',
  'smallint',
  'bigint',
  'real',
  'float',
  'double',
  'double precision',
  'numeric',
  'decimal',
  'text',
  'varchar',
  'char',
  'character',
  'character varying',
  'date',
  'time',
  'timestamp',
  'boolean',
  'bool',
]);

export function isAllowedCastType(name: string): boolean {
  return CAST_TYPES.has(name.toLowerCase());
}
