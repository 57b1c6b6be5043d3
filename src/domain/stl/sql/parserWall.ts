import { createRequire } from 'node:module';
import type sqliteBuild from 'node-sql-parser/build/sqlite.js';
import { ALLOWED_RELATIONS } from '../../../db/sandbox/catalog.ts';
import type { SqlDialect } from '../../../db/sandbox/executor.ts';
import { isAllowedCastType, isAllowedFunction } from './functions.ts';

/*
 * The parser wall of stl/sqlContents: the query text is read by a maintained SQL parser of the
 * database's own dialect (node-sql-parser), and accepted only when it is exactly one SELECT whose
 * every relation is a public view (or a CTE of the query itself) and whose every function is on the
 * allow-list. Before parsing, a scan of the raw text refuses what a parser might read differently
 * from the database: comments, quoted identifiers, escape and dollar-quoted strings, parameters,
 * a second statement, and any non-ASCII character outside a string literal (look-alike letters).
 * It returns the reason of a refusal, or undefined; it never runs anything.
 */

type Parser = InstanceType<typeof sqliteBuild.Parser>;

/**
 * Each dialect's parser is loaded on the first query of that dialect: the builds are large (loading
 * both at every worker's start cost time and memory for an operation few deployments call:
 * bench/RUNTIME.md, "Start-up"), and a process only ever needs its own database's.
 */
const requireBuild = createRequire(import.meta.url);
const parsers: Partial<Record<SqlDialect, Parser>> = {};

function parserOf(dialect: SqlDialect): Parser {
  let parser = parsers[dialect];
  if (parser === undefined) {
    const build = requireBuild(`node-sql-parser/build/${dialect}.js`) as typeof sqliteBuild;
    parser = new build.Parser();
    parsers[dialect] = parser;
  }
  return parser;
}

/** Statement kinds the parsers know besides SELECT; any of them anywhere in the tree is refused. */
const OTHER_STATEMENTS = new Set([
  'insert',
  'replace',
  'update',
  'delete',
  'create',
  'drop',
  'alter',
  'truncate',
  'rename',
  'use',
  'set',
  'lock',
  'unlock',
  'show',
  'exec',
  'execute',
  'call',
  'grant',
  'revoke',
  'transaction',
  'load_data',
  'declare',
  'explain',
  'pragma',
  'attach',
  'detach',
  'vacuum',
  'copy',
  'analyze',
  'comment',
  'deallocate',
  'prepare',
  'reindex',
  'savepoint',
  'release',
  'begin',
  'commit',
  'rollback',
  'listen',
  'notify',
  'do',
  'refresh',
  'cluster',
  'checkpoint',
  'discard',
]);

/** Placeholders and variables: a sandboxed query binds nothing. */
const PARAMETER_NODES = new Set(['param', 'var', 'origin_var']);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function checkWithParser(text: string, dialect: SqlDialect): string | undefined {
  return scanText(text) ?? checkTree(text, dialect);
}

/**
 * Walks the raw text once, tracking single-quoted literals ('' is a quote inside one). Outside a
 * literal only printable ASCII is allowed, and none of the characters that open a comment, a quoted
 * identifier, a dollar-quoted string or a parameter, nor a semicolon other than one at the end.
 */
function scanText(text: string): string | undefined {
  let inLiteral = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    const next = text[index + 1] ?? '';
    if (inLiteral) {
      if (char === "'") {
        if (next === "'") index++;
        else inLiteral = false;
      }
      continue;
    }
    const code = char.charCodeAt(0);
    if (code > 0x7e || (code < 0x20 && char !== '\t' && char !== '\n' && char !== '\r')) {
      return 'has a character outside printable ASCII outside a string literal (look-alike letters are refused)';
    }
    if (char === "'") {
      const before = text[index - 1] ?? '';
      const beforeThat = text[index - 2] ?? '';
      if (/[eE]/.test(before) && !/[A-Za-z0-9_]/.test(beforeThat)) return "uses an escape string (E'...')";
      if (before === '&') return "uses a Unicode escape string (U&'...')";
      inLiteral = true;
      continue;
    }
    if ((char === '-' && next === '-') || (char === '/' && next === '*') || char === '#') {
      return 'has a comment';
    }
    if (char === '"' || char === '`' || char === '[' || char === ']') return 'has a quoted identifier';
    if (char === '$' || char === '?' || char === '@' || char === '\\') {
      return `has a '${char}' (parameters, variables and dollar quoting are refused)`;
    }
    if (char === ';' && text.slice(index + 1).trim() !== '') return 'has more than one statement';
  }
  return inLiteral ? 'has a string literal that is not closed' : undefined;
}

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

function checkTree(text: string, dialect: SqlDialect): string | undefined {
  const parser = parserOf(dialect);
  const options = { database: dialect };
  let parsed: { tableList: string[]; ast: unknown };
  try {
    parsed = parser.parse(text, options);
  } catch {
    return `cannot be read as a ${dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'} SELECT statement`;
  }
  const statements = Array.isArray(parsed.ast) ? parsed.ast : [parsed.ast];
  if (statements.length !== 1) return 'has more than one statement';
  const [statement] = statements;
  if (!isNode(statement) || statement.type !== 'select') return 'is not a SELECT statement';

  const cteNames = new Set<string>();
  const problem = visit(statement, new Set(), cteNames, dialect);
  if (problem !== undefined) return problem;

  // The parser's own list of relations, as a second look at what the walk saw.
  for (const entry of parsed.tableList) {
    const [kind, db, table] = entry.split('::');
    if (kind !== 'select') return 'is not a pure SELECT statement';
    if (db !== 'null') return `names a relation in another schema or database (${db}.${table})`;
    const name = (table ?? '').toLowerCase();
    if (!ALLOWED_RELATIONS.has(name) && !cteNames.has(name))
      return `reads '${table}', which is not a public view`;
  }
  return undefined;
}

/**
 * Depth-first over every node of the tree; the first problem found, or undefined. `scope` holds the
 * CTE names visible at this point (lower case); `cteNames` collects every CTE name of the query.
 */
function visit(
  value: unknown,
  scope: ReadonlySet<string>,
  cteNames: Set<string>,
  dialect: SqlDialect,
): string | undefined {
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = visit(item, scope, cteNames, dialect);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (!isNode(value)) return undefined;
  let innerScope = scope;
  const type = value.type;
  if (typeof type === 'string') {
    if (OTHER_STATEMENTS.has(type.toLowerCase())) return `contains a ${type.toUpperCase()} statement`;
    if (PARAMETER_NODES.has(type)) return 'has a parameter or variable';
    if (type === 'select') {
      const clauses = checkSelectClauses(value);
      if (clauses !== undefined) return clauses;
      const names = cteNamesOf(value.with);
      if (names === undefined) return 'has a CTE with an unusual name';
      if (names.length > 0) {
        for (const name of names) cteNames.add(name);
        innerScope = new Set([...scope, ...names]);
      }
      const from = checkFrom(value.from, innerScope);
      if (from !== undefined) return from;
    }
    if (type === 'function' || type === 'aggr_func') {
      const name = functionName(value.name);
      if (name === undefined) return 'calls a function by a qualified or unusual name';
      if (!isAllowedFunction(dialect, name))
        return `calls ${name}(), which is not on the function allow-list`;
    }
  }
  if ('dataType' in value) {
    const dataType = value.dataType;
    if (typeof dataType !== 'string' || !isAllowedCastType(dataType)) {
      return `casts to ${String(dataType)}, which is not an allowed type`;
    }
  }
  return visit(Object.values(value), innerScope, cteNames, dialect);
}

/** SELECT ... INTO makes a table; FOR UPDATE/SHARE takes locks. */
function checkSelectClauses(select: Node): string | undefined {
  const into = select.into;
  if (isNode(into) && into.position !== null && into.position !== undefined) return 'has SELECT ... INTO';
  for (const key of ['for_update', 'locking_read', 'for']) {
    const clause = select[key];
    if (clause !== null && clause !== undefined) return 'has a locking clause (FOR UPDATE / FOR SHARE)';
  }
  return undefined;
}

/** Lower-case CTE names of a WITH clause; undefined when one is not a plain identifier. */
function cteNamesOf(withClause: unknown): string[] | undefined {
  if (!Array.isArray(withClause)) return [];
  const names: string[] = [];
  for (const cte of withClause) {
    const raw = isNode(cte) ? cte.name : undefined;
    const name = typeof raw === 'string' ? raw : isNode(raw) ? raw.value : undefined;
    if (typeof name !== 'string' || !IDENTIFIER.test(name)) return undefined;
    names.push(name.toLowerCase());
  }
  return names;
}

/** Every relation in FROM and JOIN must be a public view or a CTE in scope, unqualified. */
function checkFrom(from: unknown, scope: ReadonlySet<string>): string | undefined {
  if (!Array.isArray(from)) return undefined;
  for (const item of from) {
    if (!isNode(item)) continue;
    if (typeof item.table === 'string') {
      if (!IDENTIFIER.test(item.table)) return `reads '${item.table}', which is not a public view`;
      const qualifier = item.db ?? item.schema ?? null;
      if (qualifier !== null && qualifier !== undefined && qualifier !== '') {
        return `names a relation in another schema or database (${String(qualifier)}.${item.table})`;
      }
      const name = item.table.toLowerCase();
      if (!ALLOWED_RELATIONS.has(name) && !scope.has(name))
        return `reads '${item.table}', which is not a public view`;
      continue;
    }
    const expr = item.expr;
    if (isNode(expr) && 'ast' in expr) continue; // a sub-select: the walk checks it
    if (item.type === 'dual') continue;
    return 'reads from something other than a view, a CTE or a sub-select (table functions are refused)';
  }
  return undefined;
}

/** `upper`, from either shape the parsers give; undefined for a qualified or unusual name. */
function functionName(name: unknown): string | undefined {
  if (typeof name === 'string') return IDENTIFIER.test(name) ? name : undefined;
  if (!isNode(name)) return undefined;
  if (name.schema !== undefined && name.schema !== null) return undefined;
  const parts = name.name;
  if (!Array.isArray(parts) || parts.length !== 1) return undefined;
  const [part] = parts;
  const value = isNode(part) ? part.value : undefined;
  return typeof value === 'string' && IDENTIFIER.test(value) ? value : undefined;
}
