import type { Db, DbHandle } from '../../db/client.ts';
import type { CostlyReads } from '../../db/costlyReads.ts';
import { keptByText } from '../../db/keptStatements.ts';
import { type Content, MODEL_FIELDS, type Same, type Site } from '../../db/models.ts';
import { identifier, joinSql, type Sql, sql } from '../../db/sql.ts';
import { KeptPerOwner } from '../../recentlyUsed.ts';
import { assertNoProblems, type FieldProblem, notFound } from '../errors.ts';
import { JsonText } from '../jsonText.ts';
import { nextStep } from '../longWork.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import {
  cachedCount,
  countMatches,
  currentGeneration,
  MARK_EVERY,
  markedWindow,
  pageMarks,
} from './counts.ts';
import { type FieldSelection, formASelection, selectFields } from './fields.ts';
import { type ContentFormA, toContentFormA } from './forms.ts';
import { atKeptPlace, keptPick, keptPickIfAny, type Picked, pickKey } from './keptPicks.ts';
import { generationNow, keepPageText, keepsPageText, keptPageText } from './pageTexts.ts';
import {
  type CompiledContentQuery,
  type ContentFilter,
  compileContentQuery,
  type OrderRule,
} from './query.ts';

export interface ListContentsRequest
  extends Omit<ContentFilter, 'channels' | 'groupNamesNot' | 'addedSince' | 'orders'> {
  orders?: readonly OrderRule[] | undefined;
  channelId?: number | undefined;
  /** A channel's index name, as an alternative to channelId. */
  index?: string | undefined;
  page?: number | undefined;
  perPage?: number | undefined;
  /** Answer only these fields of each content (the contract's ContentFieldName). */
  fields?: readonly string[] | undefined;
}

/** A page as records, or as its JSON text when kept (pageTexts.ts). */
export type ListAnswer = ContentPage | JsonText<ContentPage>;

export interface ContentPage {
  totalCount: number;
  /** Whole records, or only the fields asked for. */
  contents: (ContentFormA | Partial<ContentFormA>)[];
}

async function resolveChannelScope(db: Db, request: ListContentsRequest): Promise<ContentFilter['channels']> {
  const { siteId, channelId, index } = request;
  if (channelId === undefined && index === undefined) return undefined;
  const channel = await db.channel.findFirst({
    where: {
      siteId,
      ...(channelId !== undefined && { id: channelId }),
      ...(index !== undefined && { indexName: index }),
    },
    select: { id: true },
  });
  if (!channel) {
    const named = [
      channelId !== undefined && `id ${channelId}`,
      index !== undefined && `index '${index}'`,
    ].filter(Boolean);
    throw notFound(`No channel with ${named.join(' and ')} exists in site ${siteId}`);
  }
  return { channelId: channel.id, scope: 'SelfAndDescendants' };
}

function pageWindow(request: ListContentsRequest, sitePageSize: number, maxPerPage: number) {
  const page = request.page || 1;
  const perPage = request.perPage || sitePageSize;
  const problems: FieldProblem[] = [];
  if (page < 1) problems.push({ field: 'page', message: 'must be 0 or more' });
  if (perPage < 1) problems.push({ field: 'perPage', message: 'must be 0 or more' });
  if (perPage > maxPerPage) problems.push({ field: 'perPage', message: `must be at most ${maxPerPage}` });
  assertNoProblems(problems);
  return { perPage, offset: (page - 1) * perPage };
}

/** The model's text fields: a stored value may be megabytes long (data written by other means). */
type TextField = {
  [Field in keyof Content]: Content[Field] extends string | null ? Field : never;
}[keyof Content];
const TEXT_FIELDS = [
  'guid',
  'groupNames',
  'tagNames',
  'title',
  'subTitle',
  'imageUrl',
  'videoUrl',
  'fileUrl',
  'body',
  'summary',
  'author',
  'source',
  'linkType',
  'linkUrl',
  'addUserName',
  'lastEditUserName',
  'writingUserName',
  'settings',
] as const satisfies readonly TextField[];
// A text field added to the model and not listed above fails the build.
const everyTextField: Same<TextField, (typeof TEXT_FIELDS)[number]> = true;
void everyTextField;
const isText = new Set<string>(TEXT_FIELDS);

/**
 * Texts are read in pieces of at most this many characters. The driver decodes a row in one go
 * on the event loop (PostgreSQL's client as the row arrives, SQLite's as the statement runs): a
 * row of megabytes would hold every other request that long (docs/security/time-limits.md).
 */
export const TEXT_PIECE_CHARACTERS = 1 << 18;

const LENGTH_SUFFIX = '__length';

/**
 * A row whose texts come to at most this many bytes together is read whole, in one statement with
 * the others; a longer one is read in pieces. Its bytes are counted from the record's header
 * (`octet_length` reads neither SQLite's overflow pages nor PostgreSQL's TOAST), so the test costs
 * a row little.
 */
export const WHOLE_ROW_TEXT_BYTES = TEXT_PIECE_CHARACTERS;

/** The columns a read of rows takes: all of the model's, or a selection's (with id and version). */
export interface RowColumns {
  fields: readonly (keyof Content)[];
  /** The columns, each text cut to its first piece and its length beside it. */
  cut: Sql;
  /** The whole columns, for rows whose texts are short (see `short`) and for the last attempt. */
  whole: Sql;
  /** A condition true of a row whose texts come to at most WHOLE_ROW_TEXT_BYTES together. */
  short: Sql;
  /** The text fields among them, in TEXT_FIELDS' order. */
  texts: readonly TextField[];
  /**
   * A list the code names (a form's whole columns), not one a request chose: its read of short rows
   * by id is one of a few texts, prepared once per connection (`reads.prepared`). A list a request
   * chose is read through `reads.chosen`: prepared too, while few enough texts are.
   */
  prepared?: true;
}

/** The columns of a read of these fields, made once per list of fields (the most recent kept). */
export function rowColumns(fields: readonly (keyof Content)[]): RowColumns {
  return columnsOfFields(fields.join(','));
}

/** The columns of a form's whole list of fields, made once by the code that names it. */
export function formColumns(fields: readonly (keyof Content)[]): RowColumns {
  return { ...columnsOf(fields), prepared: true };
}

/** Selections are the contract's field names in any combination: the most recently asked are kept. */
const KEPT_COLUMN_LISTS = 256;

const columnsOfFields = keptByText(
  (joined) => columnsOf(joined.split(',') as (keyof Content)[]),
  KEPT_COLUMN_LISTS,
);

function columnsOf(fields: readonly (keyof Content)[]): RowColumns {
  return {
    fields,
    cut: joinSql(
      fields.map((field) =>
        isText.has(field)
          ? sql`substr(${identifier(field)}, 1, ${TEXT_PIECE_CHARACTERS}) AS ${identifier(field)}, length(${identifier(field)}) AS ${identifier(`${field}${LENGTH_SUFFIX}`)}`
          : identifier(field),
      ),
    ),
    whole: joinSql(fields.map((field) => identifier(field))),
    short: textBytesAtMost(
      TEXT_FIELDS.filter((field) => fields.includes(field)),
      WHOLE_ROW_TEXT_BYTES,
    ),
    texts: TEXT_FIELDS.filter((field) => fields.includes(field)),
  };
}

/** The texts' bytes together are at most `bytes` (true when there are no texts). */
function textBytesAtMost(texts: readonly TextField[], bytes: number): Sql {
  if (texts.length === 0) return sql`TRUE`;
  const lengths = texts.map((field) => sql`COALESCE(octet_length(${identifier(field)}), 0)`);
  return sql`${joinSql(lengths, ' + ')} <= ${bytes}`;
}

/** Every column of the model: the rows of whole records. */
const ALL_COLUMNS = formColumns(MODEL_FIELDS.Content);

/**
 * What reading rows with long texts needs: the client, which database it is (how texts are cut),
 * and the driver's reads (the rows of a page come through them, not through Prisma's client).
 */
export type TextReader = Pick<DbHandle, 'db' | 'provider' | 'reads'>;

/** `"id"` among these ids, as one parameter: one statement text (kept once) whatever their number. */
function idAmong(provider: DbHandle['provider'], ids: readonly number[]): Sql {
  return provider === 'sqlite'
    ? sql`"id" IN (SELECT "value" FROM json_each(${JSON.stringify(ids)}))`
    : sql`"id" = ANY(${[...ids]}::int[])`;
}

/**
 * The rest of a long text, piece by piece, a turn of the event loop apart; undefined when the row
 * was written (its version moved) or deleted meanwhile, since the pieces would then mix two texts.
 */
async function restOf(
  database: TextReader,
  row: { id: number; version: number },
  field: TextField,
  first: string,
  length: number,
): Promise<string | undefined> {
  if (database.provider === 'postgresql') return restInBytes(database.reads, row, field, first);
  const column = identifier(field);
  let text = first;
  for (let from = TEXT_PIECE_CHARACTERS + 1; from <= length; from += TEXT_PIECE_CHARACTERS) {
    await nextStep();
    const [piece] = await database.db.$queryRaw<{ piece: string | null; version: number | bigint }[]>(
      sql`SELECT substr(${column}, ${from}, ${TEXT_PIECE_CHARACTERS}) AS "piece", "version" FROM "Content" WHERE "id" = ${row.id}`,
    );
    if (piece === undefined || Number(piece.version) !== row.version) return undefined;
    text += piece.piece ?? '';
  }
  return text;
}

/** PostgreSQL sends the rest of a long text in pieces of this many bytes. */
const TEXT_PIECE_BYTES = 1 << 18;

/**
 * PostgreSQL's `substr` counts characters from the start of the text on every call (UTF-8 has no
 * fixed width), so reading a text of megabytes a piece at a time that way costs the database the
 * square of its length. Its bytes are cut in one statement instead (the text detoasted once, each
 * piece a byte range), and decoded here a piece per turn: a cut inside a character is carried over
 * by the decoder. The first piece, already read, ends on a character, so the rest starts on one.
 */
async function restInBytes(
  reads: TextReader['reads'],
  row: { id: number; version: number },
  field: TextField,
  first: string,
): Promise<string | undefined> {
  const from = Buffer.byteLength(first, 'utf8') + 1;
  // Through the driver: each row's bytes are made as the row arrives, not all at once after the last.
  const pieces = await reads.rows<{ piece: Uint8Array; version: number | bigint }>(
    sql`SELECT substring(t."bytes" FROM ${from} + g * ${TEXT_PIECE_BYTES} FOR ${TEXT_PIECE_BYTES}) AS "piece", t."version"
      FROM (SELECT convert_to(${identifier(field)}, 'UTF8') AS "bytes", "version" FROM "Content" WHERE "id" = ${row.id} OFFSET 0) t,
        generate_series(0, (octet_length(t."bytes") - ${from}) / ${TEXT_PIECE_BYTES}) g
      ORDER BY g`,
  );
  if (pieces.length === 0 || Number(pieces[0]?.version) !== row.version) return undefined;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let text = first;
  for (const { piece } of pieces) {
    await nextStep();
    text += decoder.decode(piece, { stream: true });
  }
  return text + decoder.decode();
}

/** Rows whose long texts could not be read whole in pieces (written meanwhile) are read again, this often. */
const PIECEWISE_ATTEMPTS = 3;

/** These rows, their texts whole; a row written while its pieces were read is read again. */
async function rowsInPieces(
  database: TextReader,
  ids: readonly number[],
  columns: RowColumns,
  attempt = 1,
): Promise<Map<number, Content>> {
  const { db } = database;
  const byId = new Map<number, Content>();
  if (ids.length === 0) return byId;
  // The last attempt reads rows whole, in one go: a row written again and again still gets read.
  if (attempt > PIECEWISE_ATTEMPTS) {
    const rows = await db.$queryRaw<Content[]>(
      columns === ALL_COLUMNS
        ? sql`SELECT * FROM "Content" WHERE "id" IN (${joinSql(ids)})`
        : sql`SELECT ${columns.whole} FROM "Content" WHERE "id" IN (${joinSql(ids)})`,
    );
    for (const row of rows) byId.set(Number(row.id), row);
    return byId;
  }
  const cut = await database.reads.rows<Record<string, unknown>>(
    sql`SELECT ${columns.cut} FROM "Content" WHERE ${idAmong(database.provider, ids)}`,
  );
  const again: number[] = [];
  for (const cutRow of cut) {
    const key = { id: Number(cutRow.id), version: Number(cutRow.version) };
    // A fresh record of the model's fields alone: deleting the lengths instead would leave every
    // row a slow dictionary-mode object for the serialiser.
    const row: Record<string, unknown> = {};
    for (const field of columns.fields) row[field] = cutRow[field];
    let whole = true;
    for (const field of columns.texts) {
      const length = Number(cutRow[`${field}${LENGTH_SUFFIX}`]);
      const first = row[field];
      if (!whole || typeof first !== 'string' || length <= TEXT_PIECE_CHARACTERS) continue;
      const text = await restOf(database, key, field, first, length);
      if (text === undefined) whole = false;
      else row[field] = text;
    }
    if (whole) byId.set(key.id, row as unknown as Content);
    else again.push(key.id);
  }
  for (const [id, row] of await rowsInPieces(database, again, columns, attempt + 1)) byId.set(id, row);
  return byId;
}

/** A row read with its site's content generation beside it (generationColumn). */
type WithGeneration = { siteGeneration?: number | bigint | string };

/**
 * The column that reads site `siteId`'s content generation beside each row of a read of Content
 * (none without a site): a page read at a kept place checks it (atKeptPlace, keptPicks.ts).
 */
function generationColumn(siteId: number | undefined): Sql {
  return siteId === undefined ? sql`` : sql`, ${currentGeneration(siteId)} AS "siteGeneration"`;
}

/** The generation those rows were read with: undefined when none was asked for, or no row came. */
function generationOf(rows: readonly WithGeneration[], siteId: number | undefined): string | undefined {
  const first = rows[0];
  return siteId === undefined || first === undefined ? undefined : String(first.siteGeneration);
}

/**
 * These rows, their texts whole: the rows whose texts are short in one statement, as the driver
 * makes them; the others (and ids deleted since they were picked, which that read skips too) in
 * pieces.
 */
export async function rowsWhole(
  database: TextReader,
  ids: readonly number[],
  columns: RowColumns,
): Promise<Map<number, Content>> {
  return (await rowsWholeAt(database, ids, columns)).byId;
}

/**
 * As rowsWhole, with the generation of site `siteId` read in the statement of the short rows when
 * asked: undefined when that statement read no row.
 */
async function rowsWholeAt(
  database: TextReader,
  ids: readonly number[],
  columns: RowColumns,
  siteId?: number,
): Promise<{ byId: Map<number, Content>; generation?: string | undefined }> {
  const byId = new Map<number, Content>();
  if (ids.length === 0) return { byId };
  const statement = sql`SELECT ${columns.whole}${generationColumn(siteId)} FROM "Content" WHERE ${idAmong(database.provider, ids)} AND ${columns.short}`;
  const short = await (columns.prepared
    ? database.reads.prepared<Content & WithGeneration>(statement)
    : database.reads.chosen<Content & WithGeneration>(statement));
  for (const row of short) byId.set(row.id, row);
  const generation = generationOf(short, siteId);
  if (byId.size === ids.length) return { byId, generation };
  const long = await rowsInPieces(
    database,
    ids.filter((id) => !byId.has(id)),
    columns,
  );
  for (const [id, row] of long) byId.set(id, row);
  return { byId, generation };
}

/**
 * The rows of these contents, in this order (ids of contents deleted since they were picked are
 * left out). Reading rows by id is cheap, and stays on the client's own connection; a row's long
 * texts come in pieces of TEXT_PIECE_CHARACTERS. With `columns`, a row holds those columns only.
 */
export async function contentsInOrder(
  database: TextReader,
  ids: readonly number[],
  columns: RowColumns = ALL_COLUMNS,
): Promise<Content[]> {
  return inIdOrder(ids, await rowsWhole(database, ids, columns));
}

/** The rows of these ids found, in the ids' order: a loop, ten times as fast as flatMap (bench/RUNTIME.md). */
function inIdOrder<T>(ids: readonly number[], byId: ReadonlyMap<number, T>): T[] {
  const rows: T[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (row !== undefined) rows.push(row);
  }
  return rows;
}

/**
 * A picked content as it stands now: what tells whether a record's kept text still shows it
 * (recordTexts.ts) — its version, and its hits, which a write of the counters alone may change
 * without either the version or, on SQLite, the site's generation.
 */
export interface Placed {
  id: number;
  version: number;
  hits: number;
}

/** What a read of placed contents selects. */
const PLACED = sql`"id", "version", "hits"`;

const placedOf = (row: { id: number | bigint; version: number | bigint; hits: number | bigint }): Placed => ({
  id: Number(row.id),
  version: Number(row.version),
  hits: Number(row.hits),
});

/**
 * Placed contents and, when the read was asked to check a site (`siteId`), that site's content
 * generation read in the same statement: undefined when nothing was placed (no row to carry it).
 */
export interface PlacedRead {
  placed: Placed[];
  generation?: string | undefined;
}

/** What a read of placed contents selects: with the site's generation beside each row when asked. */
const placedColumns = (siteId: number | undefined): Sql => sql`${PLACED}${generationColumn(siteId)}`;

type PlacedRow = Placed & WithGeneration;

function placedRead(rows: readonly PlacedRow[], siteId: number | undefined): PlacedRead {
  return { placed: rows.map(placedOf), generation: generationOf(rows, siteId) };
}

/**
 * These contents as they stand, in this order (ids of contents deleted since are left out), with
 * the generation of site `siteId` when asked.
 */
export async function placedInOrder(
  database: TextReader,
  ids: readonly number[],
  siteId?: number,
): Promise<PlacedRead> {
  if (ids.length === 0) return { placed: [] };
  const rows = await database.reads.prepared<PlacedRow>(
    sql`SELECT ${placedColumns(siteId)} FROM "Content" WHERE ${idAmong(database.provider, ids)}`,
  );
  const byId = new Map(rows.map((row) => [Number(row.id), row]));
  return placedRead(inIdOrder(ids, byId), siteId);
}

/**
 * The contents a pick names, as they stand, in its order, for a pick that is not kept (with the
 * generation of site `siteId` when asked). A pick that reads its matches' rows anyway (`readsRows`:
 * one ordered by the hit counters, which no narrow index holds) reads their id, version and hits
 * itself: one statement, in the costly read. Any other picks its ids from index entries (pickOf),
 * and the versions are read for those alone: on PostgreSQL in the pick's statement (the ids an
 * array inside it, each joined to its place), on SQLite by id on the client's connection, after the
 * costly-reads thread hands back the ids.
 */
export async function placedPicked(
  database: TextReader & Pick<DbHandle, 'costly'>,
  { where, orderBy, limit, offset }: PickWindow,
  readsRows: boolean,
  siteId?: number,
): Promise<PlacedRead> {
  const { costly, provider } = database;
  const columns = placedColumns(siteId);
  if (readsRows)
    return placedRead(await costly.all<PlacedRow>(pickOf(where, orderBy, limit, offset, columns)), siteId);
  const pick = pickOf(where, orderBy, limit, offset);
  if (provider === 'sqlite') return placedInOrder(database, await pickedIds(costly, pick), siteId);
  // ARRAY(subquery) keeps the subquery's order; WITH ORDINALITY numbers it.
  const rows = await costly.all<PlacedRow>(
    // The placed columns are the content's alone: the picked ids are named "pickedId".
    sql`SELECT ${columns}
      FROM unnest(ARRAY(${pick})) WITH ORDINALITY AS "p"("pickedId", "place")
      JOIN "Content" c ON c."id" = "p"."pickedId"
      ORDER BY "p"."place"`,
  );
  return placedRead(rows, siteId);
}

/** Which matches a page picks: the filter, the order and the window. */
export interface PickWindow {
  where: Sql;
  orderBy: Sql;
  limit: number;
  offset: number;
}

/** The statement of a page's pick: the ids (or `columns`) of the matches, in order, in a window. */
export function pickOf(where: Sql, orderBy: Sql, limit: number, offset: number, columns = sql`"id"`): Sql {
  return sql`SELECT ${columns} FROM "Content" ${where} ${orderBy} LIMIT ${limit} OFFSET ${offset}`;
}

/**
 * A page's ids, picked from index entries (see listContents): the costly part, which runs as a
 * costly read (src/db/costlyReads.ts). The rows are read by id after.
 */
export async function pickedIds(costly: CostlyReads, pick: Sql): Promise<number[]> {
  const picked = await costly.all<{ id: number | bigint }>(pick);
  return picked.map((row) => Number(row.id));
}

/**
 * One page of a site's contents and the count of all matches: the page query, plus a count query
 * only when the page alone cannot tell the total (a full page, or an empty page past the first).
 *
 * The page query picks the page's ids first and reads whole rows only for them: the inner select
 * needs nothing but columns the narrow Content indexes hold, so filtering and skipping to a deep
 * page read index entries, not whole rows with their bodies. The count of a filter of site, channel
 * scope and review state is a sum over ContentTally (kept exact by triggers), not a count over
 * every match; any other filter's count is counted once per write to the site and stored
 * (counts.ts), except a filter or order that reads the hit counters, counted every time (hits.ts).
 * The ids and total of a page are kept in the process while the site's generation stays the one
 * read before they were picked (keptPicks.ts); the rows are read every time. A page that names its
 * size needs nothing else of its site and channel than their generation: what this process read of
 * them for the same place is used unread (keptPlaces below), checked against the generation read
 * with the rows; when it moved, the page is read again from a fresh read of the place.
 */
export async function listContents(
  database: Pick<DbHandle, 'db' | 'provider' | 'costly' | 'reads'>,
  request: ListContentsRequest,
  maxPerPage: number,
): Promise<ListAnswer> {
  return atKeptPlace(
    keptPlaces.of(database.reads),
    request.perPage ? placeKey(request) : undefined,
    () => placeOf(database, request),
    (place, unchecked) => listPage(database, request, maxPerPage, place, unchecked),
  );
}

/** The page as records, however it was answered (for callers that read it rather than send it). */
export async function listContentRecords(
  database: Pick<DbHandle, 'db' | 'provider' | 'costly' | 'reads'>,
  request: ListContentsRequest,
  maxPerPage: number,
): Promise<ContentPage> {
  const answer = await listContents(database, request, maxPerPage);
  return answer instanceof JsonText ? (JSON.parse(answer.bytes.toString('utf8')) as ContentPage) : answer;
}

/** What a list reads of its site and channel before its pick. */
interface ListPlace {
  /** The site's content generation, read before the pick (keptPicks.ts). */
  generation: string;
  /** The site's page size (its attributes), for a page that does not name its own. */
  pageSize: number;
  channels: ContentFilter['channels'];
}

/** Places kept per owner (a database client's reads), the least recently used let go first. */
const KEPT_PLACES = 256;

/**
 * Places this process read lately, by site and channel named (atKeptPlace, keptPicks.ts). Only
 * channel writes, which advance the site's generation, change a place's channel scope; a site's
 * attributes may change without it, so a kept place serves only a page that names its size.
 */
const keptPlaces = new KeptPerOwner<string, ListPlace>(KEPT_PLACES);

function placeKey({ siteId, channelId, index }: ListContentsRequest): string {
  return JSON.stringify([siteId, channelId ?? null, index ?? null]);
}

async function placeOf(
  { db, reads }: Pick<DbHandle, 'db' | 'reads'>,
  request: ListContentsRequest,
): Promise<ListPlace> {
  // The site's data generation with its attributes, read before the pick (keptPicks.ts).
  const [site] = await reads.prepared<Pick<Site, 'attributes'> & { generation: number | bigint | string }>(
    sql`SELECT "attributes", ${currentGeneration(sql`"Site"."id"`)} AS "generation" FROM "Site" WHERE "id" = ${request.siteId}`,
  );
  if (site === undefined) throw notFound(`Site ${request.siteId} does not exist`);
  return {
    generation: String(site.generation),
    pageSize: readSiteAttributes(site.attributes).pageSize,
    channels: await resolveChannelScope(db, request),
  };
}

/** What a list request compiles to at a place: its query, window, pick key and fields' form. */
interface CompiledPage {
  query: CompiledContentQuery;
  perPage: number;
  offset: number;
  /** What its pick is kept under (keptPicks.ts). */
  key: string | undefined;
  columns: RowColumns;
  answer: (row: Content) => ContentFormA | Partial<ContentFormA>;
  /** What the page's text is kept under (pageTexts.ts); undefined when it is read every time. */
  textKey: string | undefined;
}

/** Compiled pages kept per owner (a database client's reads), the least recently used let go first. */
const KEPT_COMPILED = 256;

/** A request longer than this as text (long In lists) is compiled every time, not kept. */
const COMPILED_KEY_CHARACTERS = 4096;

const keptCompiled = new KeptPerOwner<string, CompiledPage>(KEPT_COMPILED);

/**
 * The request compiled at this place: kept under the request's text, the place's channels and page
 * size, so a page asked again (a front end's first page, polled) compiles nothing — what it
 * compiles to depends on nothing else (the clock only in `whereNow`, made per statement).
 */
function compiledPage(
  owner: object,
  request: ListContentsRequest,
  place: ListPlace,
  maxPerPage: number,
  provider: DbHandle['provider'],
): CompiledPage {
  const text = JSON.stringify([request, place.channels ?? null, place.pageSize, maxPerPage]);
  const kept = text.length <= COMPILED_KEY_CHARACTERS ? keptCompiled.of(owner) : undefined;
  const known = kept?.get(text);
  if (known !== undefined) return known;
  const query = compileContentQuery({ ...request, channels: place.channels }, provider);
  const { perPage, offset } = pageWindow(request, place.pageSize, maxPerPage);
  const selection = formASelection(request.fields);
  const key = pickKey('page', [query.matchWhere, query.orderBy], [perPage, offset]);
  const compiled: CompiledPage = {
    query,
    perPage,
    offset,
    key,
    columns: selection === undefined ? ALL_COLUMNS : rowColumns(selection.columns),
    answer: formAOf(selection),
    // Whole records carry the hit counters; a kept pick is what a kept text stands on.
    textKey:
      kept !== undefined &&
      key !== undefined &&
      selection !== undefined &&
      keepsPageText(selection.columns) &&
      !query.readsHitCounters
        ? text
        : undefined,
  };
  kept?.set(text, compiled);
  return compiled;
}

/**
 * The page at this place. `unchecked`: the place was not read now, so nothing is picked under its
 * generation (only a pick kept for it is used) and the page is undefined unless the generation
 * read with its rows is still that one (and it has a row to carry it).
 */
async function listPage(
  database: Pick<DbHandle, 'db' | 'provider' | 'costly' | 'reads'>,
  request: ListContentsRequest,
  maxPerPage: number,
  place: ListPlace,
  unchecked: boolean,
): Promise<ListAnswer | undefined> {
  const { provider, costly, reads } = database;
  const { query, perPage, offset, key, columns, answer, textKey } = compiledPage(
    reads,
    request,
    place,
    maxPerPage,
    provider,
  );
  const { whereNow, orderBy, tallyWhere, matchWhere, orderKeys, readsHitCounters, matchesTexts } = query;
  // Views move the hit counters without advancing the generation: such a pick is never kept.
  if (unchecked && readsHitCounters) return undefined;
  const keptText = textKey === undefined ? undefined : keptPageText<ContentPage>(reads, textKey);
  if (keptText !== undefined) {
    const generation = await generationNow(reads, request.siteId);
    if (unchecked && generation !== place.generation) return undefined;
    if (generation === keptText.generation) return keptText.text;
  }

  const pick = async (): Promise<Picked> => {
    const where = whereNow();
    // A deep page of a filter that must be counted match by match: start from the stored page marks.
    if (!tallyWhere && orderKeys && offset >= MARK_EVERY && !readsHitCounters) {
      const marks = await pageMarks(database, request.siteId, where, matchWhere, orderBy, orderKeys);
      if (!marks || offset >= marks.count) return { totalCount: marks?.count ?? 0, ids: [] };
      const window = markedWindow(orderKeys, marks, request.siteId, offset, perPage);
      if (window) {
        const ids = await pickedIds(
          costly,
          pickOf(sql`${where} AND ${window.conditions}`, orderBy, perPage, window.offset),
        );
        // Empty only when the site was written since the marks were made (the page holds a match).
        if (ids.length > 0) return { totalCount: marks.count, ids };
      }
    }

    const ids = await pickedIds(costly, pickOf(where, orderBy, perPage, offset));
    let totalCount = offset + ids.length;
    if (ids.length === perPage || (ids.length === 0 && offset > 0)) {
      if (tallyWhere) {
        const [summed] = await reads.rows<{ total: bigint | number | string | null }>(
          sql`SELECT SUM("count") AS "total" FROM "ContentTally" ${tallyWhere}`,
        );
        totalCount = Number(summed?.total ?? 0);
      } else if (readsHitCounters) totalCount = await countMatches(costly, where);
      else totalCount = await cachedCount(database, request.siteId, where, matchWhere);
    }
    return { totalCount, ids };
  };
  const read = async (): Promise<ListAnswer | undefined> => {
    const picked = readsHitCounters
      ? await pick()
      : unchecked
        ? keptPickIfAny<Picked>(reads, key, place.generation)
        : await keptPick(reads, key, place.generation, pick);
    if (picked === undefined) return undefined;
    const { byId, generation } = await rowsWholeAt(
      database,
      picked.ids,
      columns,
      unchecked || textKey !== undefined ? request.siteId : undefined,
    );
    if (unchecked && generation !== place.generation) return undefined;
    const page: ContentPage = {
      totalCount: picked.totalCount,
      contents: inIdOrder(picked.ids, byId).map(answer),
    };
    // Kept only when its rows were read at the generation its ids were picked at.
    if (textKey === undefined || generation !== place.generation) return page;
    return keepPageText(reads, textKey, generation, page) ?? page;
  };
  // A filter that matches text patterns reads in the database's turn for such reads, its rows too.
  return matchesTexts ? costly.matchingTexts(read) : read();
}

/** How a row is answered: whole (form A), or only the selected fields. */
function formAOf(
  selection: FieldSelection<ContentFormA> | undefined,
): (row: Content) => ContentFormA | Partial<ContentFormA> {
  return selection === undefined ? toContentFormA : (row) => selectFields(row, selection);
}
