import type BetterSqlite3 from 'better-sqlite3';
import type pg from 'pg';
import { objectMaker } from '../objectLiterals.ts';
import { keptByText } from './keptStatements.ts';
import { type ApiKey, type Channel, type Content, MODEL_FIELDS } from './models.ts';
import { type Sql, sqliteBindable } from './sql.ts';
import type { ConnectionTurns } from './sqliteTurns.ts';

/*
 * The reads every request of the hot paths makes (a content by its path, an API key by digest),
 * through the driver with statements prepared once and kept, instead of through Prisma's client:
 * for a one-row read, Prisma's query compiler, its result shaping and the SQLite adapter's
 * re-preparing of every statement cost several times the query itself (bench/RUNTIME.md, "Get
 * one, the request path").
 *
 * Nothing here restates the model. The columns read are the model's scalar fields as the generated
 * client lists them (`Prisma.<Model>ScalarFieldEnum`, in the model's order, as Prisma returns
 * them), and each column's conversion follows the type the database reports for it: SQLite's
 * declared column type (BOOLEAN stored as 0/1, DATETIME as epoch milliseconds, see
 * SQLITE_TIMESTAMP_FORMAT), PostgreSQL's type of the result column (TIMESTAMP(3), which holds UTC).
 * test/db/pointReads.test.ts proves the rows equal Prisma's, field by field, on both databases.
 *
 * The rows are Prisma's rows for the same condition: on SQLite the statements run on the adapter's
 * own connection, taking its turns as Prisma's plain statements do (src/db/sqliteTurns.ts): a read
 * there while another request's transaction is open would run inside it and see its uncommitted
 * writes, so it waits for that transaction to end, and a second connection would cost a second page
 * cache for reads that are already the cheapest the service makes. On PostgreSQL they run on the
 * adapter's own pool (never inside another request's transaction, which holds a client of its own).
 */

/** A channel of a site's list, with its approved contents outside the recycle bin (ContentTally). */
export type SiteChannel = Channel & { contentNum: number };

export interface PointReads {
  /** The content `id` of that site and channel, outside the recycle bin. */
  content(id: number, siteId: number, channelId: number): Promise<Content | null>;
  apiKeyByDigest(digest: string): Promise<ApiKey | null>;
  /**
   * Every channel of a site, by taxis then id, each with its approved contents: one statement, so
   * one snapshot. A site's whole tree (10,000 channels) through Prisma's client cost seconds of
   * result shaping; through the driver it is the query's own cost (bench/README.md, "Write surface").
   */
  siteChannels(siteId: number): Promise<SiteChannel[]>;
  /**
   * What a site's channel list is made of, in the order of siteChannels: each channel's id, parent,
   * version (every write of its row increments it) and approved contents. Four columns instead of
   * 36, for telling whether a kept list is still current, and which of its channels are not
   * (src/domain/channels/list.ts).
   */
  siteChannelStates(siteId: number): Promise<SiteChannelState[]>;
  /** The channels of siteChannels among `ids` (any order): the ones a kept list must read again. */
  siteChannelsAmong(siteId: number, ids: readonly number[]): Promise<SiteChannel[]>;
  /**
   * The site's ContentGeneration as text ('0' when it has none): database triggers advance it in
   * every transaction that writes the site's contents or channels, so while it is unchanged, so is
   * everything read from them.
   */
  siteGeneration(siteId: number): Promise<string>;
  /**
   * The rows of a statement made with `sql` (src/db/sql.ts) whose text varies with the request (a
   * page's rows by id, a channel scope's total): through the driver, as the reads above, the
   * statement kept per text (SQLite) and the columns converted as theirs are.
   */
  rows<T>(statement: Sql): Promise<T[]>;
  /**
   * As `rows`, for a statement whose text is one of a few the code writes (the template-tag reads'
   * choice of site and channel, a list's site, a form's whole rows by id) and whose best plan does
   * not depend on its values (keys): on PostgreSQL it is prepared once per connection (named), so
   * that it is neither parsed nor planned again on each request, which cost the database more than
   * running it did; on SQLite it is `rows`, whose statements are kept per text already. Not for a
   * text that varies with the request: each text stays prepared on every connection of the pool.
   */
  prepared<T>(statement: Sql): Promise<T[]>;
  /**
   * As `prepared`, for a text a request chose among a bounded set (a `fields` selection's read of
   * rows by id, whose plan is keys only like the forms' own): on PostgreSQL the first
   * CHOSEN_TEXTS such texts of the process are prepared on each connection and stay so, and any
   * text after them runs as `rows` does, so that no sequence of requests leaves more than that many
   * statements on a connection. On SQLite it is `rows`.
   */
  chosen<T>(statement: Sql): Promise<T[]>;
}

/** One channel of siteChannelStates. */
export interface SiteChannelState {
  id: number;
  parentId: number;
  version: number;
  contentNum: number;
}

type Row = Record<string, unknown>;
/** Runs one kept statement with its parameters; its rows (only the first when `one`). */
type Reader = (params: readonly unknown[]) => Promise<Row[]>;
type QueryObserver = ((sqlText: string, durationMs: number) => void) | undefined;

type Dialect = 'sqlite' | 'postgresql';

function select(dialect: Dialect, table: string, fields: readonly string[], where: string[]): string {
  const columns = fields.map((field) => `"${field}"`).join(', ');
  const conditions = where.map((condition, index) =>
    condition.replace('?', dialect === 'sqlite' ? '?' : `$${index + 1}`),
  );
  return `SELECT ${columns} FROM "${table}" WHERE ${conditions.join(' AND ')} LIMIT 1`;
}

const CONTENT_FIELDS = MODEL_FIELDS.Content;
const API_KEY_FIELDS = MODEL_FIELDS.ApiKey;
const CHANNEL_FIELDS = MODEL_FIELDS.Channel;

function statements(dialect: Dialect) {
  const notRecycled = dialect === 'sqlite' ? '"recycled" = 0' : '"recycled" = false';
  const channelColumns = CHANNEL_FIELDS.map((field) => `c."${field}"`).join(', ');
  const approvedOfSite = `FROM "Channel" c
      LEFT JOIN "ContentTally" t ON t."siteId" = c."siteId" AND t."channelId" = c."id" AND t."checked" = ${dialect === 'sqlite' ? '1' : 'true'}
      WHERE c."siteId" = ${dialect === 'sqlite' ? '?' : '$1'}`;
  const inOrder = `ORDER BY c."taxis", c."id"`;
  return {
    // ContentTally's key (siteId, channelId, checked) answers each channel's row of the join.
    siteChannels: `SELECT ${channelColumns}, COALESCE(t."count", 0) AS "contentNum" ${approvedOfSite} ${inOrder}`,
    siteChannelStates: `SELECT c."id", c."parentId", c."version", COALESCE(t."count", 0) AS "contentNum" ${approvedOfSite} ${inOrder}`,
    // The ids as one parameter (a JSON array on SQLite, an array on PostgreSQL): one kept statement.
    siteChannelsAmong: `SELECT ${channelColumns}, COALESCE(t."count", 0) AS "contentNum" ${approvedOfSite}
      AND c."id" IN (${dialect === 'sqlite' ? 'SELECT "value" FROM json_each(?)' : 'SELECT unnest($2::int[])'})`,
    siteGeneration: `SELECT "generation" FROM "ContentGeneration" WHERE "siteId" = ${dialect === 'sqlite' ? '?' : '$1'}`,
    content: select(dialect, 'Content', CONTENT_FIELDS, [
      '"id" = ?',
      '"siteId" = ?',
      '"channelId" = ?',
      notRecycled,
    ]),
    apiKey: select(dialect, 'ApiKey', API_KEY_FIELDS, ['"digest" = ?']),
  };
}

/** Texts of `rows` kept per connection (the most recently used), prepared once each. */
const KEPT_TEXTS = 256;

/** Texts of `prepared`: the few the code writes, with room to spare. */
const PREPARED_TEXTS = 64;

/** Texts of `chosen` prepared per process (and so per connection), the first ones asked for. */
export const CHOSEN_TEXTS = 32;

/**
 * `make(text)` for each of the first `bound` texts, kept for good (never let go, so never made
 * again under another name); every later text is `otherwise(text)`.
 */
function firstTexts(
  make: (text: string) => Reader,
  bound: number,
  otherwise: (text: string) => Reader,
): (text: string) => Reader {
  const kept = new Map<string, Reader>();
  return (text) => {
    const found = kept.get(text);
    if (found !== undefined) return found;
    if (kept.size >= bound) return otherwise(text);
    const made = make(text);
    kept.set(text, made);
    return made;
  };
}

function pointReads(
  reader: (sqlText: string) => Reader,
  dialect: Dialect,
  adHoc = reader,
  chosenTexts = CHOSEN_TEXTS,
): PointReads {
  const sqlText = statements(dialect);
  const readerOf = keptByText(adHoc, KEPT_TEXTS);
  const preparedOf = dialect === 'sqlite' ? readerOf : keptByText(reader, PREPARED_TEXTS);
  const chosenOf = dialect === 'sqlite' ? readerOf : firstTexts(reader, chosenTexts, readerOf);
  const content = reader(sqlText.content);
  const apiKey = reader(sqlText.apiKey);
  const siteChannels = reader(sqlText.siteChannels);
  const siteChannelStates = reader(sqlText.siteChannelStates);
  const siteChannelsAmong = reader(sqlText.siteChannelsAmong);
  const siteGeneration = reader(sqlText.siteGeneration);
  const run = (readerOfText: (text: string) => Reader, statement: Sql) =>
    dialect === 'sqlite'
      ? readerOfText(statement.sql)(statement.values.map(sqliteBindable))
      : readerOfText(statement.text)(statement.values);
  return {
    async content(id, siteId, channelId) {
      return ((await content([id, siteId, channelId]))[0] as Content | undefined) ?? null;
    },
    async apiKeyByDigest(digest) {
      return ((await apiKey([digest]))[0] as ApiKey | undefined) ?? null;
    },
    async siteChannels(siteId) {
      return (await siteChannels([siteId])) as SiteChannel[];
    },
    async siteChannelStates(siteId) {
      return (await siteChannelStates([siteId])) as unknown as SiteChannelState[];
    },
    async siteChannelsAmong(siteId, ids) {
      const list = dialect === 'sqlite' ? JSON.stringify(ids) : [...ids];
      return (await siteChannelsAmong([siteId, list])) as SiteChannel[];
    },
    async siteGeneration(siteId) {
      // A BIGINT: a number from SQLite's statement, text from pg.
      return String((await siteGeneration([siteId]))[0]?.generation ?? 0);
    },
    async rows<T>(statement: Sql) {
      return (await run(readerOf, statement)) as T[];
    },
    async prepared<T>(statement: Sql) {
      return (await run(preparedOf, statement)) as T[];
    },
    async chosen<T>(statement: Sql) {
      return (await run(chosenOf, statement)) as T[];
    },
  };
}

function timed<T>(observe: QueryObserver, sqlText: string, run: () => T): T {
  if (observe === undefined) return run();
  const start = performance.now();
  const result = run();
  observe(sqlText, performance.now() - start);
  return result;
}

/** How a value of each SQLite declared type becomes the model's value (others are kept as read). */
const SQLITE_CONVERSIONS: Readonly<Record<string, Conversion>> = {
  BOOLEAN: (value) => value !== 0,
  // As Prisma's adapter: epoch milliseconds; a text date (written by SQL defaults) is parsed.
  DATETIME: (value) => new Date(typeof value === 'string' ? value : Number(value)),
};

type Conversion = (value: unknown) => unknown;

export interface SqliteStatement {
  statement: BetterSqlite3.Statement;
  /** Makes the row of one result (an array of the columns' values, in order). */
  rowOf: (values: readonly unknown[]) => Row;
}

/**
 * A row maker for these columns (each with its conversion, or undefined to keep the value as read)
 * that builds every row as one object literal (objectMaker): filling an empty object column by
 * column went through a keyed store per value, which for a site's 10,000 channels cost more than
 * the query itself.
 */
function rowMaker(names: readonly string[], conversions: readonly (Conversion | undefined)[]) {
  return objectMaker<readonly unknown[], Row>(
    names,
    (index) =>
      conversions[index] === undefined
        ? `input[${index}]`
        : `input[${index}] === null ? null : parts[${index}](input[${index}])`,
    conversions,
  );
}

/**
 * A statement prepared on `database` that reads the model's rows: its columns converted by the
 * types SQLite declares for them (also used by the point writes, src/db/pointWrites.ts).
 */
export function sqliteRowReader(database: BetterSqlite3.Database, sqlText: string): SqliteStatement {
  // The adapter's connection reads integers as BigInt; the model's Int columns are 32-bit, and
  // epoch milliseconds are safe integers, so this statement reads plain numbers.
  // Rows are read as arrays and the objects built here: the driver's own row objects cost the
  // interning of every column name on every row, and writing a Date over a number it read
  // changed the object's shape, both on the CPU profile of a get-one (bench/RUNTIME.md, "Get
  // one, the request path").
  const statement = database.prepare(sqlText).safeIntegers(false).raw(true);
  const columns = statement.columns();
  const names = columns.map(({ name }) => name);
  const conversions = columns.map(({ type }) => SQLITE_CONVERSIONS[(type ?? '').toUpperCase()]);
  return { statement, rowOf: rowMaker(names, conversions) };
}

/**
 * Point reads on the SQLite adapter's connection. `connection` gives the connection Prisma's adapter
 * opened (it opens it on the client's first query); a statement is prepared on it once. Each read
 * takes the connection's `turns`, as the adapter's own statements do.
 */
export function sqlitePointReads(
  connection: () => Promise<BetterSqlite3.Database>,
  turns: ConnectionTurns,
  observe?: QueryObserver,
): PointReads {
  return pointReads((sqlText) => {
    // Per connection: a reconnected client has a new one, and a statement belongs to its connection.
    const prepared = new WeakMap<BetterSqlite3.Database, SqliteStatement>();
    const prepare = (database: BetterSqlite3.Database): SqliteStatement => {
      const made = sqliteRowReader(database, sqlText);
      prepared.set(database, made);
      return made;
    };
    return async (params) => {
      const database = await connection();
      // No await between the turn and the statement: a transaction begun in between would hold it.
      return turns.statement(() => {
        const { statement, rowOf } = prepared.get(database) ?? prepare(database);
        return timed(observe, sqlText, () => statement.all(...params) as unknown[][]).map(rowOf);
      });
    };
  }, 'sqlite');
}

/**
 * TIMESTAMP (without time zone, what Prisma's DateTime is on PostgreSQL) holds UTC: read it as UTC,
 * where pg's default would read it in the process's time zone.
 */
const TIMESTAMP_OID = 1114;
function parseUtcTimestamp(text: string): Date {
  return new Date(`${text.replace(' ', 'T')}Z`);
}
/** pg's type parsers, with TIMESTAMP read as UTC (as Prisma's adapter reads it). */
function utcTypes(types: typeof pg.types) {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === TIMESTAMP_OID && format !== 'binary'
        ? parseUtcTimestamp
        : types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
  };
}

/**
 * The rows of a pg result read as arrays (`rowMode: 'array'`), made by a rowMaker for its columns:
 * pg's own row objects are filled name by name (a keyed store per value, megamorphic across the
 * service's statements: the largest JavaScript item of a PostgreSQL template-tag read's CPU
 * profile after the driver's parser). The maker is kept for the next result of the same columns.
 */
function arrayRows() {
  let names: readonly string[] = [];
  let make: ((values: readonly unknown[]) => Row) | undefined;
  return (result: pg.QueryArrayResult): Row[] => {
    const { fields } = result;
    if (make === undefined || fields.length !== names.length || fields.some((f, i) => f.name !== names[i])) {
      names = fields.map((field) => field.name);
      make = rowMaker(
        names,
        names.map(() => undefined),
      );
    }
    return result.rows.map(make);
  };
}

/**
 * One statement on the pool, its rows read as the point reads read them (for the point writes of
 * src/db/pointWrites.ts on PostgreSQL): the model's columns come back as Prisma returns them.
 */
export function postgresStatement(
  pool: () => Promise<pg.Pool>,
  types: typeof pg.types,
  observe?: QueryObserver,
) {
  const utc = utcTypes(types);
  const rowsOf = keptByText(() => arrayRows(), KEPT_TEXTS);
  return async (sqlText: string, params: readonly unknown[]): Promise<Row[]> => {
    const start = performance.now();
    const result = await (await pool()).query({
      text: sqlText,
      values: [...params],
      types: utc,
      rowMode: 'array',
    });
    observe?.(sqlText, performance.now() - start);
    return rowsOf(sqlText)(result);
  };
}

/**
 * Point reads on the pool Prisma's adapter uses (`pool` gives it once the adapter owns it); each
 * statement is prepared once per connection (named). `types` is pg's own (passed in: only a
 * PostgreSQL service loads pg).
 */
export function postgresPointReads(
  pool: () => Promise<pg.Pool>,
  types: typeof pg.types,
  observe?: QueryObserver,
  chosenTexts = CHOSEN_TEXTS,
): PointReads {
  const POSTGRES_TYPES = utcTypes(types);
  let count = 0;
  const reader =
    (named: boolean) =>
    (sqlText: string): Reader => {
      const name = named ? `cms_point_read_${++count}` : undefined;
      const rowsOf = arrayRows();
      return async (params) => {
        const start = performance.now();
        const result = await (await pool()).query({
          ...(name !== undefined && { name }),
          text: sqlText,
          values: [...params],
          types: POSTGRES_TYPES,
          rowMode: 'array',
        });
        observe?.(sqlText, performance.now() - start);
        return rowsOf(result);
      };
    };
  // The texts of `rows` are not named: a named statement stays on every connection of the pool.
  return pointReads(reader(true), 'postgresql', reader(false), chosenTexts);
}
