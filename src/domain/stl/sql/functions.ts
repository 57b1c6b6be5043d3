import type { SqlDialect } from '../../../db/sandbox/executor.ts';

/*
 * Functions a sandboxed query may call: string, math, date and aggregate functions, nothing that
 * reads files, settings or the catalog, sleeps, loads code or makes huge values (zeroblob,
 * randomblob, repeat, generate_series). Names are compared in lower case. A function that one
 * database lacks fails there with a 400 (e.g. group_concat on PostgreSQL).
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
    'group_concat',
    'total',
    'ifnull',
    'instr',
    'printf',
    'format',
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
    'string_agg',
    'bool_and',
    'bool_or',
    'left',
    'right',
    'lpad',
    'rpad',
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
