import { createRequire } from 'node:module';
import type sqliteBuild from 'node-sql-parser/build/sqlite.js';
import { ALLOWED_RELATIONS, PUBLIC_VIEWS } from '../../../db/sandbox/catalog.ts';
import type { SqlDialect } from '../../../db/sandbox/executor.ts';
import { RecentlyUsed } from '../../../recentlyUsed.ts';
import {
  checkFunctionArguments,
  isAllowedCastType,
  isAllowedFunction,
  isAllowedOperator,
  isSessionKeyword,
} from './functions.ts';

/*
 * The parser wall of stl/sqlContents: the query text is read by a maintained SQL parser of the
 * database's own dialect (node-sql-parser), and accepted only when it is exactly one SELECT whose
 * every name resolves, the way that database resolves it, to a public view, a CTE in scope or a
 * column of a relation the query reads; whose every function and operator is on an allow-list; and
 * whose every construct is one this wall knows (anything else is refused, not walked past). Before
 * parsing, a scan of the raw text refuses what a parser might read differently from the database:
 * comments, quoted identifiers, escape and dollar-quoted strings, parameters, a second statement,
 * and any non-ASCII character outside a string literal (look-alike letters). It returns the reason
 * of a refusal, or undefined; it never runs anything. docs/security/sql-sandbox.md explains each rule.
 */

type Parser = InstanceType<typeof sqliteBuild.Parser>;

/**
 * Each dialect's parser is loaded on the first query of that dialect: the builds are large (loading
 * both at every worker's start cost time and memory for an operation few deployments call:
 * bench/RUNTIME.md, "Start-up"), and a process only ever needs its own database's.
 */
const requireBuild = createRequire(import.meta.url);
// Code, not state: each dialect's parser, loaded once and the same for every database.
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

/** Expression nodes that hold only literals or other nodes, walked as they are. */
const PLAIN_NODES = new Set([
  'number',
  'single_quote_string',
  'null',
  'bool',
  'boolean',
  'star',
  'expr',
  'expr_list',
  'case',
  'when',
  'else',
  'ASC',
  'DESC',
  'DISTINCT',
  'window',
  'extract',
  // LIKE … ESCAPE '!'
  'ESCAPE',
  // literals of plain types: DATE '…', TIMESTAMP '…', INTERVAL '…', X'…', N'…', B'…'
  'date',
  'time',
  'timestamp',
  'interval',
  'hex_string',
  'full_hex_string',
  'natural_string',
  'bit_string',
]);

/** Keywords the parsers give as `origin` nodes inside the special syntax of trim and position. */
const ORIGIN_WORDS = new Set(['both', 'leading', 'trailing', 'from', 'for', 'in']);

/** Keys a SELECT node may carry with a value; any other clause is refused. */
const SELECT_KEYS = new Set([
  'type',
  'with',
  'distinct',
  'columns',
  'into',
  'from',
  'where',
  'groupby',
  'having',
  'orderby',
  'limit',
  'window',
  '_next',
  'set_op',
  'for_update',
  'locking_read',
  'for',
  'parentheses',
]);

/** Keys an entry of FROM may carry with a value (TABLESAMPLE and the like are refused). */
const FROM_KEYS = new Set(['table', 'as', 'db', 'schema', 'join', 'on', 'using', 'expr', 'type', 'prefix']);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Columns of each public view, in lower case (names are compared without regard to case). */
const VIEW_COLUMNS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(PUBLIC_VIEWS).map(([view, columns]) => [
    view.toLowerCase(),
    new Set(columns.map((column) => column.toLowerCase())),
  ]),
);

class Refusal extends Error {}

const refuse = (reason: string): never => {
  throw new Refusal(reason);
};

/**
 * How many texts' verdicts are kept, the most recently asked. Templates send the same few queries
 * again and again: parsing each again cost its CPU every time, and the parser, once hot enough for
 * V8's optimising compiler, a transient ~50 MB of the process's memory (bench/MEMORY.md).
 */
export const VERDICTS_KEPT = 256;

// Not shared state: a memo of a pure function of its key (the dialect and the text), bounded; at
// most VERDICTS_KEPT texts of at most MAX_QUERY_LENGTH characters.
const verdicts = new RecentlyUsed<string, string | undefined>(VERDICTS_KEPT);

export function checkWithParser(text: string, dialect: SqlDialect): string | undefined {
  const key = `${dialect}:${text}`;
  // A text asked again is now the most recent (an allowed text's verdict is undefined).
  const kept = verdicts.get(key);
  if (kept !== undefined || verdicts.has(key)) return kept;
  const verdict = scanText(text) ?? checkTree(text, dialect);
  verdicts.set(key, verdict);
  return verdict;
}

/** How many verdicts are kept now (tests). */
export const verdictsKept = (): number => verdicts.size;

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

const present = (value: unknown) =>
  value !== null && value !== undefined && !(Array.isArray(value) && value.length === 0);

function checkTree(text: string, dialect: SqlDialect): string | undefined {
  const parser = parserOf(dialect);
  let parsed: { tableList: string[]; ast: unknown };
  try {
    parsed = parser.parse(text, { database: dialect });
  } catch {
    return `cannot be read as a ${dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'} SELECT statement`;
  }
  const statements = Array.isArray(parsed.ast) ? parsed.ast : [parsed.ast];
  if (statements.length !== 1) return 'has more than one statement';
  const [statement] = statements;
  if (!isNode(statement) || statement.type !== 'select') return 'is not a SELECT statement';

  const resolver = new Resolver(dialect);
  try {
    resolver.select(statement, undefined, undefined);
  } catch (error) {
    if (error instanceof Refusal) return error.message;
    throw error;
  }

  // The parser's own list of relations, as a second look at what the walk saw.
  for (const entry of parsed.tableList) {
    const [kind, db, table] = entry.split('::');
    if (kind !== 'select') return 'is not a pure SELECT statement';
    if (db !== 'null') return `names a relation in another schema or database (${db}.${table})`;
    const name = (table ?? '').toLowerCase();
    if (!ALLOWED_RELATIONS.has(name) && !resolver.cteNames.has(name))
      return `reads '${table}', which is not a public view`;
  }
  return undefined;
}

type Columns = ReadonlySet<string>;

/** A CTE as the names in its scope see it: its declared columns, or those its body gives. */
interface Cte {
  statement: Node;
  declared: Columns | undefined;
  checked: Columns | undefined;
}

/** CTEs visible at a point of the query, innermost WITH first. */
interface CteScope {
  ctes: ReadonlyMap<string, Cte>;
  parent: CteScope | undefined;
}

/** Relations of a FROM (by alias or name) and the SELECT's output aliases; outer queries after. */
interface ColumnScope {
  relations: ReadonlyMap<string, Columns>;
  aliases: ReadonlySet<string>;
  parent: ColumnScope | undefined;
}

/** The sub-select of a wrapper node (`(SELECT …)`, IN (SELECT …), a CTE body on SQLite), if any. */
function subSelect(value: unknown): Node | undefined {
  if (!isNode(value)) return undefined;
  if (value.type === 'select') return value;
  const ast = value.ast;
  return isNode(ast) && ast.type === 'select' ? ast : undefined;
}

/** `name` or `{ value: name }`, as the two parsers give identifiers; undefined for anything else. */
function identifier(value: unknown): string | undefined {
  const raw = isNode(value) ? (isNode(value.expr) ? value.expr.value : value.value) : value;
  return typeof raw === 'string' && IDENTIFIER.test(raw) ? raw : undefined;
}

/**
 * Resolves every name of a query as its database does, throwing a Refusal at the first one that is
 * not provably a public view, a CTE in scope or a column of a relation in scope.
 */
class Resolver {
  /** Every CTE name of the query, for the second look at the parser's table list. */
  readonly cteNames = new Set<string>();

  constructor(private readonly dialect: SqlDialect) {}

  /**
   * Checks a SELECT (with its set operations) and answers the names of its output columns.
   * `setNames` are the output names of the first SELECT of a UNION/INTERSECT/EXCEPT, which the
   * ORDER BY at its end (given with the last SELECT) may name.
   */
  select(
    node: Node,
    outerCtes: CteScope | undefined,
    outer: ColumnScope | undefined,
    setNames: Columns = new Set(),
  ): Columns {
    for (const [key, value] of Object.entries(node)) {
      if (!SELECT_KEYS.has(key) && present(value))
        refuse(`uses a clause the sandbox does not allow (${key})`);
    }
    checkSelectClauses(node);
    const ctes = this.with(node.with, outerCtes, outer);
    const relations = this.from(node.from, ctes, outer);
    const outputs = outputNames(node.columns, relations);
    const aliases = new Set([...outputs.aliases, ...setNames]);
    const scope: ColumnScope = { relations, aliases, parent: outer };
    for (const key of ['columns', 'where', 'groupby', 'having', 'orderby', 'limit', 'window', 'distinct']) {
      this.expression(node[key], ctes, scope);
    }
    for (const item of Array.isArray(node.from) ? node.from : []) {
      if (!isNode(item)) continue;
      this.expression(item.on, ctes, scope);
      for (const column of Array.isArray(item.using) ? item.using : []) {
        const name = identifier(column);
        if (name === undefined || !this.isColumn(name.toLowerCase(), scope, false))
          refuse('joins USING a name that is not a column of both relations');
      }
    }
    // UNION, INTERSECT, EXCEPT: the next SELECT shares this one's WITH, not its FROM.
    const next = node._next;
    if (isNode(next)) this.select(next, ctes, outer, setNames.size > 0 ? setNames : outputs.names);
    return outputs.names;
  }

  /**
   * The CTEs of a WITH, each body checked in the scope its database gives it. PostgreSQL: a body
   * sees the CTEs defined before it in the same WITH, or, with RECURSIVE, all of them (itself
   * included); a name not in scope is the real relation of that name. SQLite: every body sees every
   * CTE of its WITH, RECURSIVE or not. Either way the main query sees them all, and inner WITHs
   * shadow outer ones.
   */
  private with(
    clause: unknown,
    parent: CteScope | undefined,
    outer: ColumnScope | undefined,
  ): CteScope | undefined {
    if (!Array.isArray(clause) || clause.length === 0) return parent;
    const entries: [string, Cte][] = [];
    let recursive = false;
    for (const item of clause) {
      if (!isNode(item)) refuse('has a CTE the sandbox cannot read');
      const cte = item as Node;
      const name = identifier(cte.name);
      const statement = subSelect(cte.stmt);
      if (name === undefined) return refuse('has a CTE with an unusual name');
      if (statement === undefined) return refuse('has a CTE that is not a SELECT');
      if (cte.recursive === true) recursive = true;
      const declared = Array.isArray(cte.columns)
        ? new Set(
            cte.columns.map((column) => {
              const columnName = identifier(isNode(column) ? column.column : column) ?? identifier(column);
              return columnName === undefined
                ? refuse('has a CTE column with an unusual name')
                : columnName.toLowerCase();
            }),
          )
        : undefined;
      entries.push([name.toLowerCase(), { statement, declared, checked: undefined }]);
      this.cteNames.add(name.toLowerCase());
    }
    const all: CteScope = { ctes: new Map(entries), parent };
    const seesAll = recursive || this.dialect === 'sqlite';
    entries.forEach(([, cte], index) => {
      const scope = seesAll ? all : { ctes: new Map(entries.slice(0, index)), parent };
      const columns = this.select(cte.statement, scope, outer);
      cte.checked = cte.declared ?? columns;
    });
    return all;
  }

  /** The relations of a FROM, by the name the query gives each (its alias, else its own name). */
  private from(from: unknown, ctes: CteScope | undefined, outer: ColumnScope | undefined) {
    const relations = new Map<string, Columns>();
    if (!Array.isArray(from)) return relations;
    for (const item of from) {
      if (!isNode(item)) continue;
      for (const [key, value] of Object.entries(item)) {
        if (!FROM_KEYS.has(key) && present(value))
          refuse(`uses a FROM clause the sandbox does not allow (${key})`);
      }
      if (item.prefix !== null && item.prefix !== undefined) refuse(`uses ${String(item.prefix)} in FROM`);
      const alias = item.as === null || item.as === undefined ? undefined : identifier(item.as);
      if (item.as !== null && item.as !== undefined && alias === undefined) refuse('has an unusual alias');
      if (typeof item.table === 'string') {
        if (!IDENTIFIER.test(item.table)) refuse(`reads '${item.table}', which is not a public view`);
        const qualifier = item.db ?? item.schema ?? null;
        if (qualifier !== null && qualifier !== '') {
          refuse(`names a relation in another schema or database (${String(qualifier)}.${item.table})`);
        }
        const columns = this.relation(item.table, ctes);
        relations.set((alias ?? item.table).toLowerCase(), columns);
        continue;
      }
      const statement = subSelect(item.expr);
      if (statement !== undefined) {
        const columns = this.select(statement, ctes, outer);
        if (alias !== undefined) relations.set(alias.toLowerCase(), columns);
        else relations.set(`(sub-select ${relations.size})`, columns);
        continue;
      }
      if (item.type === 'dual') continue;
      refuse('reads from something other than a view, a CTE or a sub-select (table functions are refused)');
    }
    return relations;
  }

  /** A relation name: the nearest CTE of that name in scope, else a public view, else refused. */
  private relation(name: string, ctes: CteScope | undefined): Columns {
    const lower = name.toLowerCase();
    for (let scope = ctes; scope !== undefined; scope = scope.parent) {
      const cte = scope.ctes.get(lower);
      if (cte !== undefined) return cte.checked ?? cte.declared ?? quickOutputs(cte.statement);
    }
    const view = VIEW_COLUMNS.get(lower);
    return view ?? refuse(`reads '${name}', which is not a public view`);
  }

  /** Whether an unqualified name is a column of a relation in scope (or an alias of this SELECT). */
  private isColumn(name: string, scope: ColumnScope, aliases: boolean): boolean {
    if (aliases && scope.aliases.has(name)) return true;
    for (let level: ColumnScope | undefined = scope; level !== undefined; level = level.parent) {
      for (const columns of level.relations.values()) if (columns.has(name)) return true;
    }
    return false;
  }

  private qualifiedColumns(table: string, scope: ColumnScope): Columns | undefined {
    for (let level: ColumnScope | undefined = scope; level !== undefined; level = level.parent) {
      const columns = level.relations.get(table);
      if (columns !== undefined) return columns;
    }
    return undefined;
  }

  private columnRef(node: Node, scope: ColumnScope): void {
    if (present(node.db) || present(node.schema)) refuse('names a column through a schema');
    if (present(node.collate)) refuse('uses COLLATE');
    const rawColumn = node.column;
    const star =
      rawColumn === '*' || (isNode(rawColumn) && isNode(rawColumn.expr) && rawColumn.expr.value === '*');
    const column = star ? '*' : identifier(rawColumn);
    if (column === undefined) return void refuse('names a column in an unusual way');
    const lower = column.toLowerCase();
    if (isSessionKeyword(lower))
      refuse(`uses ${lower}, which reveals the session (role, database, settings)`);
    const rawTable = node.table;
    if (rawTable === null || rawTable === undefined) {
      if (star || this.isColumn(lower, scope, true)) return;
      refuse(`names '${column}', which is not a column of the relations it reads`);
    }
    const table = identifier(rawTable);
    if (table === undefined) return void refuse('names a column in an unusual way');
    const columns = this.qualifiedColumns(table.toLowerCase(), scope);
    if (columns === undefined)
      refuse(`names '${table}.${column}', but '${table}' is not a relation it reads`);
    // On PostgreSQL `row.name` calls the function name(row) when the relation has no such column.
    if (!star && !columns?.has(lower))
      refuse(`names '${table}.${column}', which is not a column of '${table}'`);
  }

  /** Every node of an expression: the kinds this wall knows, each by its own rules. */
  private expression(value: unknown, ctes: CteScope | undefined, scope: ColumnScope): void {
    if (Array.isArray(value)) {
      for (const item of value) this.expression(item, ctes, scope);
      return;
    }
    if (!isNode(value)) return;
    const statement = subSelect(value);
    if (statement !== undefined) {
      this.select(statement, ctes, scope);
      return;
    }
    if (present(value.collate)) refuse('uses COLLATE');
    if ('dataType' in value) {
      const dataType = value.dataType;
      if (typeof dataType !== 'string' || !isAllowedCastType(dataType)) {
        refuse(`casts to ${String(dataType)}, which is not an allowed type`);
      }
    }
    const type = value.type;
    if (typeof type !== 'string') {
      // Structures without a kind (a window's specification, an aggregate's arguments) hold nodes.
      this.expression(Object.values(value), ctes, scope);
      return;
    }
    if (OTHER_STATEMENTS.has(type.toLowerCase())) refuse(`contains a ${type.toUpperCase()} statement`);
    if (PARAMETER_NODES.has(type)) refuse('has a parameter or variable');
    switch (type) {
      case 'column_ref':
        this.columnRef(value, scope);
        return;
      case 'function':
      case 'aggr_func':
      case 'window_func': {
        const name = functionName(value.name);
        if (name === undefined) return void refuse('calls a function by a qualified or unusual name');
        if (!isAllowedFunction(this.dialect, name))
          refuse(`calls ${name.toLowerCase()}(), which is not on the function allow-list`);
        const argumentProblem = checkFunctionArguments(name, argumentsOf(value.args));
        if (argumentProblem !== undefined) refuse(argumentProblem);
        const { name: _name, ...rest } = value;
        this.expression(Object.values(rest), ctes, scope);
        return;
      }
      case 'binary_expr':
      case 'unary_expr': {
        const operator = typeof value.operator === 'string' ? value.operator : '';
        if (!isAllowedOperator(operator))
          refuse(`uses the operator ${operator}, which is not on the operator allow-list`);
        this.expression([value.left, value.right, value.expr], ctes, scope);
        return;
      }
      case 'cast': {
        const { type: _type, ...rest } = value;
        this.expression(Object.values(rest), ctes, scope);
        return;
      }
      case 'origin':
        if (typeof value.value !== 'string' || !ORIGIN_WORDS.has(value.value.toLowerCase()))
          refuse(`uses ${String(value.value)} where the sandbox expects an expression`);
        return;
      case 'default':
        // A bare name as the parsers give it in some places (ORDER BY, window specifications).
        this.columnRef({ column: value.value }, scope);
        return;
      default: {
        if (!PLAIN_NODES.has(type)) refuse(`uses ${type}, which the sandbox does not allow`);
        const { type: _type, ...rest } = value;
        this.expression(Object.values(rest), ctes, scope);
      }
    }
  }
}

/**
 * The names a SELECT's output columns go by: an alias, a column's own name, every column of the
 * relations a star stands for. An expression without an alias gets no usable name here, so that
 * the wall never believes a relation has a column its database would not find.
 */
function outputNames(columns: unknown, relations: ReadonlyMap<string, Columns>) {
  const names = new Set<string>();
  const aliases = new Set<string>();
  if (columns === '*') {
    for (const relation of relations.values()) for (const name of relation) names.add(name);
    return { names, aliases };
  }
  for (const item of Array.isArray(columns) ? columns : []) {
    if (!isNode(item)) continue;
    if (item.as !== null && item.as !== undefined) {
      const alias = identifier(item.as);
      if (alias === undefined) refuse('has an unusual alias');
      const lower = (alias as string).toLowerCase();
      if (isSessionKeyword(lower)) refuse(`uses ${lower} as an alias`);
      names.add(lower);
      aliases.add(lower);
      continue;
    }
    const expr = item.expr;
    if (!isNode(expr) || expr.type !== 'column_ref') continue;
    const column = expr.column;
    const star = column === '*' || (isNode(column) && isNode(column.expr) && column.expr.value === '*');
    if (star) {
      const table = identifier(expr.table);
      const sources = table === undefined ? [...relations.values()] : [relations.get(table.toLowerCase())];
      for (const relation of sources) for (const name of relation ?? []) names.add(name);
    } else {
      const name = identifier(column);
      if (name !== undefined) names.add(name.toLowerCase());
    }
  }
  return { names, aliases };
}

/** A CTE's columns before its body is checked (a recursive reference): its aliases and plain names. */
function quickOutputs(statement: Node): Columns {
  return outputNames(statement.columns, new Map()).names;
}

/** SELECT ... INTO makes a table; FOR UPDATE/SHARE takes locks. */
function checkSelectClauses(select: Node): void {
  const into = select.into;
  if (isNode(into) && present(into.position)) refuse('has SELECT ... INTO');
  for (const key of ['for_update', 'locking_read', 'for']) {
    if (present(select[key])) refuse('has a locking clause (FOR UPDATE / FOR SHARE)');
  }
}

function argumentsOf(args: unknown): unknown[] {
  if (!isNode(args)) return [];
  if (Array.isArray(args.value)) return args.value;
  return args.expr === undefined ? [] : [args.expr];
}

/** `upper`, from either shape the parsers give; undefined for a qualified or unusual name. */
function functionName(name: unknown): string | undefined {
  if (typeof name === 'string') return IDENTIFIER.test(name) ? name : undefined;
  if (!isNode(name)) return undefined;
  if (present(name.schema)) return undefined;
  const parts = name.name;
  if (!Array.isArray(parts) || parts.length !== 1) return undefined;
  const [part] = parts;
  const value = isNode(part) ? part.value : undefined;
  return typeof value === 'string' && IDENTIFIER.test(value) ? value : undefined;
}
