import type { DbProvider } from '../../db/client.ts';
import { likeTokens, likeToRegex } from '../../db/likePatterns.ts';
import { identifier, joinSql, keyword, type Sql, sql } from '../../db/sql.ts';
import { likeCondition, timeLimitCondition } from '../../db/sqliteLimitedSql.ts';
import { RecentlyUsed } from '../../recentlyUsed.ts';
import { parseDateTime } from '../dates.ts';
import { assertNoProblems, DomainError, type FieldProblem, invalid } from '../errors.ts';
import { CONTENT_COLUMN_NAMES, type ContentColumn, contentColumn, isHitColumn } from './columns.ts';

/*
 * The content query compiler: turns the filters of a list request into one SQL WHERE clause and one
 * ORDER BY clause over the Content table. Every value is bound as a parameter; identifiers come only
 * from the column catalogue. The same fragments serve the count and the page query.
 */

export interface WhereRule {
  column: string;
  operator?: string | undefined;
  value: string | number | boolean;
}

export interface OrderRule {
  column: string;
  desc: boolean;
}

/**
 * Which channels' contents, relative to one channel: the list operation takes a channel with its
 * whole subtree; the template tag's `scope` picks among the others.
 */
export type ChannelScope = 'Self' | 'Children' | 'SelfAndChildren' | 'Descendant' | 'SelfAndDescendants';

export interface ContentFilter {
  siteId: number;
  /** Restrict to these channels of the site; absent = the whole site. */
  channels?: { channelId: number; scope: ChannelScope } | undefined;
  checked?: boolean | undefined;
  top?: boolean | undefined;
  recommend?: boolean | undefined;
  hot?: boolean | undefined;
  color?: boolean | undefined;
  /** Contents in any of these groups. */
  groupNames?: readonly string[] | undefined;
  /** Contents in none of these groups. */
  groupNamesNot?: readonly string[] | undefined;
  /** Contents with any of these tags. */
  tagNames?: readonly string[] | undefined;
  /** Contents added at or after this instant. */
  addedSince?: Date | undefined;
  wheres?: readonly WhereRule[] | undefined;
  /** Sort rules (the default order when empty), or a random order. */
  orders?: readonly OrderRule[] | 'random' | undefined;
  /**
   * Which way a page of a channel scope is read, when the caller knows from the maintained counts
   * (ContentTally) and the planner cannot (SQLite keeps no statistics; PostgreSQL's come from
   * ANALYZE): 'walk' — along an index of the order, the channel tested on each entry (no index may
   * serve the channel condition); 'scope' — the scope's rows first, then sorted (no index may serve
   * the order). Absent: the planner chooses. Either way the same rows in the same order.
   */
  plan?: 'walk' | 'scope' | undefined;
}

export interface CompiledContentQuery {
  /**
   * The WHERE clause as a statement runs it, made when called: on SQLite its time limit (and a
   * LIKE's) counts from now (src/db/sqliteTimeLimit.ts), so the rest of a compiled query can be
   * kept for the next request.
   */
  whereNow: () => Sql;
  orderBy: Sql;
  /**
   * When the filter is one whose total the ContentTally rows hold (site, channel scope, review
   * state): the WHERE clause over ContentTally that sums to the count of matches.
   */
  tallyWhere: Sql | undefined;
  /**
   * The conditions of `where` that decide which contents match (all but SQLite's time limit, whose
   * parameter is the time of the request): what a stored count of this filter is filed under.
   */
  matchWhere: Sql;
  /**
   * The sort keys, when every one is a column that holds no NULL and is an integer or a boolean
   * (the last is always the unique id): a page can then start after a known row (keyset).
   */
  orderKeys: readonly OrderKey[] | undefined;
  /**
   * The filter or the order reads a hit counter (HIT_COLUMNS), which a page view changes without
   * advancing the site's generation (hits.ts): its total and page marks must not be stored.
   */
  readsHitCounters: boolean;
  /**
   * The filter matches text patterns (a Like or NotLike rule): its cost is the stored texts' length,
   * so the read runs in the database's turn for such reads (CostlyReads.matchingTexts).
   */
  matchesTexts: boolean;
}

export interface OrderKey {
  column: Sql;
  desc: boolean;
}

type Operator = '=' | '!=' | '>' | '>=' | '<' | '<=' | 'in' | 'notin' | 'like' | 'notlike';
const OPERATORS: Record<string, Operator> = {
  '=': '=',
  '!=': '!=',
  '>': '>',
  '>=': '>=',
  '<': '<',
  '<=': '<=',
  in: 'in',
  notin: 'notin',
  like: 'like',
  notlike: 'notlike',
};
const OPERATOR_NAMES = '=, !=, >, >=, <, <=, In, NotIn, Like, NotLike';

type Scalar = number | boolean | string | Date;

/** Bounds the contract documents (Where.value), so a request is refused before any SQL is built. */
const MAX_PATTERN_LENGTH = 1000;
const MAX_IN_ITEMS = 1000;

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** Escape LIKE's own wildcards so that a literal value matches only itself. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/**
 * PostgreSQL's LIKE is kept for patterns up to this many characters: one call on a 5 MB text then
 * stays well under a second past statement_timeout (bench/HOSTILE.md); longer ones run as regular
 * expressions, which the statement timeout interrupts (src/db/likePatterns.ts).
 */
const POSTGRES_LIKE_MAX_PATTERN = 16;

/**
 * Case-insensitive LIKE with `\\` as the escape character on both databases. SQLite's LIKE already
 * ignores (ASCII) case. On PostgreSQL, `lower(x) LIKE lower(p)` is what ILIKE itself computes in a
 * multi-byte (UTF-8) database — same answers — but it lowers the pattern once per query rather
 * than once per row (a 1,000-character pattern made that the whole cost), and the trigram index
 * on lower("title") serves it, as it serves the regular expression of a long pattern (lowered the
 * same way: lower() leaves the expression's own signs as they are).
 */
function likeSql(expression: Sql, pattern: string, provider: DbProvider, issuedAt: IssuedAt): Sql {
  if (provider === 'postgresql') {
    const regex = pattern.length > POSTGRES_LIKE_MAX_PATTERN ? likeToRegex(pattern) : undefined;
    return regex === undefined
      ? sql`lower(${expression}) LIKE lower(${pattern}) ESCAPE '\\'`
      : sql`lower(${expression}) ~ lower(${regex})`;
  }
  return issuedAt === undefined
    ? sql`${expression} LIKE ${pattern} ESCAPE '\\'`
    : likeCondition(expression, pattern, issuedAt);
}

/** True when the comma-joined list column holds `name` (case-insensitively). */
function listHas(column: Sql, name: string, provider: DbProvider, issuedAt: IssuedAt): Sql {
  return likeSql(sql`(',' || ${column} || ',')`, `%,${escapeLike(name.trim())},%`, provider, issuedAt);
}

/** The list columns whose items the ContentLabel table holds, with the kind it files them under. */
const LABEL_KINDS: Readonly<Record<string, number>> = { groupNames: 0, tagNames: 1 };

/**
 * Contents whose list column holds any of `names` (case-insensitively), looked up in ContentLabel
 * (one lower-cased row per item, kept by triggers) instead of matching every row's joined text:
 * the same answer as `listHas` for each name, at the cost of an index lookup. lower() is the
 * database's own on both sides — the one its LIKE/ILIKE applies — so case rules stay identical.
 */
function labelled(siteId: number, kind: number, names: readonly string[]): Sql {
  const lowered = names.map((name) => sql`lower(${name.trim()})`);
  return sql`"id" IN (SELECT "contentId" FROM "ContentLabel" WHERE "siteId" = ${siteId} AND "kind" = ${kind} AND "name" IN (${joinSql(lowered)}))`;
}

function anyOf(parts: Sql[]): Sql {
  return parts.length === 0 ? sql`1 = 0` : sql`(${joinSql(parts, ' OR ')})`;
}

function readValue(value: WhereRule['value'], column: ContentColumn, name: string): Scalar | string {
  switch (column.kind) {
    case 'integer': {
      const number =
        typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : NaN;
      if (typeof value === 'boolean' || (typeof value === 'string' && !/^-?\d+$/.test(value.trim())))
        throw invalid(`must be an integer for column '${name}'`);
      if (!Number.isSafeInteger(number)) throw invalid(`must be an integer for column '${name}'`);
      // Every integer column is int32: PostgreSQL refuses a wider value (SQLite would compare it).
      if (number < INT32_MIN || number > INT32_MAX)
        throw invalid(`must be an integer from ${INT32_MIN} to ${INT32_MAX} for column '${name}'`);
      return number;
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      const word = String(value).trim().toLowerCase();
      if (word === 'true' || word === '1') return true;
      if (word === 'false' || word === '0') return false;
      throw invalid(`must be true or false for column '${name}'`);
    }
    case 'date': {
      const date = typeof value === 'string' ? parseDateTime(value) : undefined;
      if (!date) throw invalid(`must be a date-time 'yyyy-MM-dd HH:mm:ss' for column '${name}'`);
      return date;
    }
    default:
      return String(value);
  }
}

/**
 * SQLite: when the query whose conditions are compiled was issued, for the time limit its LIKE
 * tests carry (src/db/sqliteTimeLimit.ts); undefined for the conditions as a plain filter (what a
 * stored count is filed under) and on PostgreSQL, where statement_timeout bounds the statement.
 */
type IssuedAt = number | undefined;

/** A rule's operator as the filter reads it (`=` when absent, any case); undefined when unknown. */
function operatorOf(rule: WhereRule): Operator | undefined {
  return OPERATORS[(rule.operator ?? '=').trim().toLowerCase()];
}

function compileWhere(rule: WhereRule, siteId: number, provider: DbProvider, issuedAt: IssuedAt): Sql {
  const column = contentColumn(rule.column);
  if (!column)
    throw invalid(`unknown column '${rule.column}'; allowed columns: ${CONTENT_COLUMN_NAMES.join(', ')}`);
  const operator = operatorOf(rule);
  if (!operator) throw invalid(`unknown operator '${rule.operator}'; allowed operators: ${OPERATOR_NAMES}`);

  const name = rule.column;
  const raw = identifier(column.column);
  const isText = column.kind === 'text' || column.kind === 'list';
  // A NULL text reads as '': comparisons then behave the same on every row and database.
  const expression = column.kind === 'text' && column.nullable ? sql`COALESCE(${raw}, '')` : raw;
  const collated = isText && provider === 'postgresql' ? sql`${expression} COLLATE "C"` : expression;
  const keepNulls = (condition: Sql) =>
    column.nullable && !isText ? sql`(${raw} IS NULL OR ${condition})` : condition;

  if (operator === 'like' || operator === 'notlike') {
    if (!isText) throw invalid(`operator '${rule.operator}' applies to text columns only, not '${name}'`);
    // A long pattern costs time on every row it is tried against (and blocks SQLite's one thread).
    if (String(rule.value).length > MAX_PATTERN_LENGTH)
      throw invalid(`a ${rule.operator} pattern must be at most ${MAX_PATTERN_LENGTH} characters`);
    // PostgreSQL fails such a statement; SQLite's LIKE matches nothing. Both: a client mistake.
    if (likeTokens(String(rule.value)) === undefined)
      throw invalid(
        `a ${rule.operator} pattern must not end with a lone '\\' (write '\\\\' for a backslash)`,
      );
    // SQLite: the title is tested as lower("title"), which a SQLite-only index holds beside the
    // narrow list columns (migration content_count_cache), so a title pattern is tested on index
    // entries, not on whole rows. Same answer: SQLite's LIKE and its lower() both fold ASCII only.
    const subject = provider === 'sqlite' && column.column === 'title' ? sql`lower(${raw})` : expression;
    const match = likeSql(subject, String(rule.value), provider, issuedAt);
    return operator === 'like' ? match : sql`NOT (${match})`;
  }

  if (operator === 'in' || operator === 'notin') {
    const items = String(rule.value)
      .split(',')
      .map((item) => item.trim());
    if (items.length > MAX_IN_ITEMS)
      throw invalid(`an ${rule.operator} list must hold at most ${MAX_IN_ITEMS} items`);
    if (column.kind === 'list') {
      const names = items.filter((item) => item !== '');
      const kind = LABEL_KINDS[column.column];
      if (kind === undefined || names.length === 0) {
        const has = anyOf(names.map((item) => listHas(raw, item, provider, issuedAt)));
        return operator === 'in' ? has : sql`NOT ${has}`;
      }
      const has = labelled(siteId, kind, names);
      return operator === 'in' ? has : sql`NOT (${has})`;
    }
    const values = items.map((item) => readValue(item, column, name));
    const set = sql`${expression} IN (${joinSql(values)})`;
    return operator === 'in' ? set : keepNulls(sql`NOT (${set})`);
  }

  if (column.kind === 'list') {
    if (operator !== '=' && operator !== '!=')
      throw invalid(`operator '${rule.operator}' does not apply to list column '${name}'`);
    const item = String(rule.value).trim();
    const kind = LABEL_KINDS[column.column];
    // An empty name matches an empty item (',,' in the joined text), which ContentLabel does not hold.
    const has =
      kind === undefined || item === ''
        ? listHas(raw, item, provider, issuedAt)
        : labelled(siteId, kind, [item]);
    return operator === '=' ? has : sql`NOT (${has})`;
  }
  if (column.kind === 'boolean' && operator !== '=' && operator !== '!=')
    throw invalid(`operator '${rule.operator}' does not apply to boolean column '${name}'`);

  const value = readValue(rule.value, column, name);
  const comparison = sql`${collated} ${sqlOperator(operator)} ${value}`;
  return operator === '!=' ? keepNulls(comparison) : comparison;
}

function sqlOperator(operator: '=' | '!=' | '>' | '>=' | '<' | '<='): Sql {
  const text = { '=': '=', '!=': '<>', '>': '>', '>=': '>=', '<': '<', '<=': '<=' }[operator];
  return keyword(text);
}

const DEFAULT_ORDER: readonly OrderRule[] = [
  { column: 'top', desc: true },
  { column: 'channelId', desc: true },
  { column: 'taxis', desc: true },
  { column: 'id', desc: true },
];

function compileOrder(
  orders: readonly OrderRule[] | 'random',
  provider: DbProvider,
  problems: FieldProblem[],
  unindexed = false,
): { orderBy: Sql; orderKeys: OrderKey[] | undefined } {
  // RANDOM() is the same function on SQLite and PostgreSQL.
  if (orders === 'random') return { orderBy: sql`ORDER BY RANDOM()`, orderKeys: undefined };
  const rules = orders.length > 0 ? orders : DEFAULT_ORDER;
  const parts: Sql[] = [];
  let keys: OrderKey[] | undefined = [];
  const seen = new Set<string>();
  rules.forEach((rule, index) => {
    const column = contentColumn(rule.column);
    if (!column) {
      problems.push({
        field: `orders/${index}/column`,
        message: `unknown column '${rule.column}'; allowed columns: ${CONTENT_COLUMN_NAMES.join(', ')}`,
      });
      return;
    }
    if (seen.has(column.column)) return;
    seen.add(column.column);
    const isText = column.kind === 'text' || column.kind === 'list';
    const base = identifier(column.column);
    // Unary plus (the same value, on both databases) is an expression no index holds: the planner
    // then cannot read the rows in this order from an index and reads the filter's rows first.
    const expression =
      isText && provider === 'postgresql'
        ? sql`${base} COLLATE "C"`
        : unindexed && column.kind === 'integer'
          ? sql`+${base}`
          : base;
    // NULLs sort as the smallest value on both databases.
    const nulls = column.nullable ? (rule.desc ? ' NULLS LAST' : ' NULLS FIRST') : '';
    parts.push(sql`${expression} ${keyword(`${rule.desc ? 'DESC' : 'ASC'}${nulls}`)}`);
    const keyed = !column.nullable && (column.kind === 'integer' || column.kind === 'boolean');
    keys = keyed ? keys?.concat({ column: base, desc: rule.desc }) : undefined;
  });
  // A unique last key keeps pages stable when the requested keys tie.
  if (!seen.has('id')) {
    parts.push(sql`"id" DESC`);
    keys = keys?.concat({ column: sql`"id"`, desc: true });
  }
  return { orderBy: sql`ORDER BY ${joinSql(parts, ', ')}`, orderKeys: keys };
}

/** The channel ids of a scope, as a sub-select on the site's channels (parentsPath is stored). */
function channelCondition(
  siteId: number,
  { channelId: id, scope }: NonNullable<ContentFilter['channels']>,
  unindexed: boolean,
): Sql {
  // Unary plus: the same test, which no index on channelId can serve (ContentFilter.plan 'walk').
  const column = unindexed ? sql`+"channelId"` : sql`"channelId"`;
  if (scope === 'Self') return sql`${column} = ${id}`;
  const below = sql`',' || "parentsPath" || ',' LIKE ${`%,${id},%`}`;
  const which = {
    Children: sql`"parentId" = ${id}`,
    SelfAndChildren: sql`("id" = ${id} OR "parentId" = ${id})`,
    Descendant: below,
    SelfAndDescendants: sql`("id" = ${id} OR ${below})`,
  }[scope];
  return sql`${column} IN (SELECT "id" FROM "Channel" WHERE "siteId" = ${siteId} AND ${which})`;
}

/**
 * Compile a filter; every problem of the request is collected into one `invalid` error.
 *
 * The conditions ContentTally can sum (contents outside the recycle bin by site, channel and
 * `checked`) are collected as they are made; any other condition narrows the filter past what the
 * tally holds, and the count is then a COUNT over the matches.
 */
export function compileContentQuery(filter: ContentFilter, provider: DbProvider): CompiledContentQuery {
  const problems: FieldProblem[] = [];
  const site = sql`"siteId" = ${filter.siteId}`;
  const conditions: Sql[] = [site, sql`"recycled" = ${false}`];
  // The same conditions as the statement runs them (a LIKE test under SQLite's time limit), made
  // for the time a statement is issued at.
  const limited: ((issuedAt: number) => Sql)[] = conditions.map((condition) => () => condition);
  const tallied: Sql[] = [site];
  let narrowed = false;
  const narrow = (condition: Sql, asRun: (issuedAt: number) => Sql = () => condition) => {
    conditions.push(condition);
    limited.push(asRun);
    narrowed = true;
  };

  if (filter.channels !== undefined) {
    const channels = channelCondition(filter.siteId, filter.channels, filter.plan === 'walk');
    conditions.push(channels);
    limited.push(() => channels);
    tallied.push(channelCondition(filter.siteId, filter.channels, false));
  }
  for (const flag of ['checked', 'top', 'recommend', 'hot', 'color'] as const) {
    const value = filter[flag];
    if (value === undefined) continue;
    const condition = sql`${identifier(flag)} = ${value}`;
    if (flag === 'checked') {
      conditions.push(condition);
      limited.push(() => condition);
      tallied.push(condition);
    } else narrow(condition);
  }
  for (const [field, column, negate] of [
    ['groupNames', 'groupNames', false],
    ['groupNamesNot', 'groupNames', true],
    ['tagNames', 'tagNames', false],
  ] as const) {
    const names = (filter[field] ?? []).filter((name) => name.trim() !== '');
    if (names.length === 0) continue;
    const any = labelled(filter.siteId, LABEL_KINDS[column] as number, names);
    narrow(negate ? sql`NOT (${any})` : any);
  }
  if (filter.addedSince !== undefined) narrow(sql`"addDate" >= ${filter.addedSince}`);
  (filter.wheres ?? []).forEach((rule, index) => {
    try {
      const condition = compileWhere(rule, filter.siteId, provider, undefined);
      narrow(condition, (issuedAt) => compileWhere(rule, filter.siteId, provider, issuedAt));
    } catch (error) {
      // A rule's own problem is reported at that rule's place in the filter.
      if (!(error instanceof DomainError)) throw error;
      problems.push({ field: `wheres/${index}`, message: error.message });
    }
  });

  const { orderBy, orderKeys } = compileOrder(
    filter.orders ?? [],
    provider,
    problems,
    filter.plan === 'scope',
  );
  assertNoProblems(problems);
  const matchWhere = sql`WHERE ${joinSql(conditions, ' AND ')}`;
  return {
    // SQLite: first among the row tests, the time limit that keeps a costly filter from holding the
    // process's one thread (src/db/sqliteTimeLimit.ts); PostgreSQL has statement_timeout.
    whereNow:
      provider === 'sqlite'
        ? () => {
            const issuedAt = Date.now();
            const asRun = limited.map((condition) => condition(issuedAt));
            return sql`WHERE ${joinSql([timeLimitCondition(issuedAt), ...asRun], ' AND ')}`;
          }
        : () => matchWhere,
    matchWhere,
    orderKeys,
    orderBy,
    tallyWhere: narrowed ? undefined : sql`WHERE ${joinSql(tallied, ' AND ')}`,
    readsHitCounters: [
      ...(filter.wheres ?? []),
      ...(filter.orders === 'random' ? [] : (filter.orders ?? [])),
    ].some((rule) => isHitColumn(contentColumn(rule.column)?.column)),
    matchesTexts: (filter.wheres ?? []).some((rule) => {
      const operator = operatorOf(rule);
      return operator === 'like' || operator === 'notlike';
    }),
  };
}

/** Compiled queries kept by their filter's text: the same few template-tag reads are asked again and again. */
const KEPT_QUERIES = 256;

/** A filter longer than this as text (long lists of names) is compiled every time, not kept. */
const KEPT_FILTER_CHARACTERS = 4096;

const keptQueries = new RecentlyUsed<string, CompiledContentQuery>(KEPT_QUERIES);

/**
 * compileContentQuery, kept by the filter's text and the provider, which is all it depends on (the
 * clock only in `whereNow`, made per statement); a filter that holds an instant (a `since` read
 * against the clock) is compiled every time.
 */
export function keptContentQuery(filter: ContentFilter, provider: DbProvider): CompiledContentQuery {
  if (filter.addedSince !== undefined) return compileContentQuery(filter, provider);
  const key = `${provider}:${JSON.stringify(filter)}`;
  if (key.length > KEPT_FILTER_CHARACTERS) return compileContentQuery(filter, provider);
  let compiled = keptQueries.get(key);
  if (compiled === undefined) {
    compiled = compileContentQuery(filter, provider);
    keptQueries.set(key, compiled);
  }
  return compiled;
}
