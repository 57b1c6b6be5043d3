import type { DbHandle } from '../../db/client.ts';
import type { Content } from '../../db/models.ts';
import { type Sql, sql } from '../../db/sql.ts';
import type { components } from '../../generated/openapi.ts';
import { type FieldSelection, formBSelection, prismaSelect, selectFields } from '../contents/fields.ts';
import { CONTENT_FORM_B_VALUES, type ContentFormB, toContentFormB } from '../contents/forms.ts';
import { atKeptPlace, keptPick, keptPickIfAny, pickKey } from '../contents/keptPicks.ts';
import {
  formColumns,
  type PlacedRead,
  pickedIds,
  pickOf,
  placedInOrder,
  placedPicked,
  rowColumns,
} from '../contents/list.ts';
import { type ContentFilter, keptContentQuery, type OrderRule } from '../contents/query.ts';
import { pageRecords } from '../contents/recordTexts.ts';
import { parseDateTime } from '../dates.ts';
import { assertNoProblems, type FieldProblem, invalidFields, notFound } from '../errors.ts';
import { JsonText, utf8Of } from '../jsonText.ts';
import { normalizeList } from '../lists.ts';
import {
  type ChannelChoice,
  type ChosenIds,
  choiceKey,
  chooseSiteAndChannelIds,
  chooseSiteIds,
  hasChannelChoice,
  keptChoicesOf,
  type SiteChoice,
} from './choose.ts';

/*
 * The template tag's content list and content value: approved contents outside the recycle bin,
 * in form B. The tag attributes become a ContentFilter, and the list operation's compiler turns it
 * into SQL: one place decides how a filter reads the Content table.
 */

export type StlScope = 'Self' | 'Children' | 'SelfAndChildren' | 'Descendant' | 'All';
export type StlOrder =
  | 'Default'
  | 'Back'
  | 'AddDate'
  | 'AddDateBack'
  | 'LastModifiedDate'
  | 'Hits'
  | 'Random';

export interface StlContentsRequest extends SiteChoice, ChannelChoice {
  scope?: StlScope | undefined;
  order?: StlOrder | undefined;
  startNum?: number | undefined;
  totalNum?: number | undefined;
  group?: string | undefined;
  groupNot?: string | undefined;
  tags?: string | undefined;
  isTop?: boolean | undefined;
  isRecommend?: boolean | undefined;
  isHot?: boolean | undefined;
  isColor?: boolean | undefined;
  since?: string | undefined;
  /** The original's raw-SQL condition: refused whatever it holds. */
  where?: string | undefined;
  /** Answer only these fields (comma-separated names of ContentFormBFieldName). */
  fields?: string | undefined;
}

const ORDERS: Record<StlOrder, readonly OrderRule[] | 'random'> = {
  Default: [
    { column: 'top', desc: true },
    { column: 'taxis', desc: true },
    { column: 'id', desc: true },
  ],
  Back: [
    { column: 'top', desc: true },
    { column: 'taxis', desc: false },
    { column: 'id', desc: true },
  ],
  AddDate: [
    { column: 'addDate', desc: true },
    { column: 'id', desc: true },
  ],
  AddDateBack: [
    { column: 'addDate', desc: false },
    { column: 'id', desc: false },
  ],
  LastModifiedDate: [
    { column: 'lastModifiedDate', desc: true },
    { column: 'id', desc: true },
  ],
  Hits: [
    { column: 'hits', desc: true },
    { column: 'id', desc: true },
  ],
  Random: 'random',
};

const PERIOD = /^(\d{1,4})([hdwmy])$/;
/**
 * The longest period in years, and the first year of a date: the instant stays one both databases
 * compute (PostgreSQL's timestamps have no year 0 and begin in 4713 BC; the contract says the same).
 */
const MAX_SINCE_YEARS = 1000;
const SINCE_DATE = /^[1-9]\d{3}-\d{2}-\d{2}$/;

/**
 * The instant `since` names: a period before `now` (`12h`, `7d`, `2w`, `3m`, `1y`; months and years
 * by the calendar) or the start of a day (`2024-05-01`, in the service's time zone).
 */
export function sinceInstant(since: string, now: Date): Date | undefined {
  const period = PERIOD.exec(since);
  if (period) {
    const amount = Number(period[1]);
    if (period[2] === 'y' && amount > MAX_SINCE_YEARS) return undefined;
    const start = new Date(now);
    switch (period[2]) {
      case 'h':
        start.setHours(start.getHours() - amount);
        break;
      case 'd':
        start.setDate(start.getDate() - amount);
        break;
      case 'w':
        start.setDate(start.getDate() - 7 * amount);
        break;
      case 'm':
        start.setMonth(start.getMonth() - amount);
        break;
      default:
        start.setFullYear(start.getFullYear() - amount);
    }
    return start;
  }
  return SINCE_DATE.test(since) ? parseDateTime(since) : undefined;
}

function filterOf(
  request: StlContentsRequest,
  siteId: number,
  channels: ContentFilter['channels'],
  now: Date,
): ContentFilter {
  const problems: FieldProblem[] = [];
  if (request.where !== undefined)
    problems.push({ field: 'where', message: 'is not supported: raw SQL conditions are refused' });
  const addedSince = request.since === undefined ? undefined : sinceInstant(request.since, now);
  if (request.since !== undefined && addedSince === undefined)
    problems.push({
      field: 'since',
      message: `'${request.since}' is not a period (7d, at most ${MAX_SINCE_YEARS}y) or a date from 1000-01-01 (yyyy-MM-dd)`,
    });
  assertNoProblems(problems);
  return {
    siteId,
    channels,
    checked: true,
    top: request.isTop,
    recommend: request.isRecommend,
    hot: request.isHot,
    color: request.isColor,
    groupNames: normalizeList(request.group ?? ''),
    groupNamesNot: normalizeList(request.groupNot ?? ''),
    tagNames: normalizeList(request.tags ?? ''),
    addedSince,
    orders: ORDERS[request.order ?? 'Default'],
  };
}

function windowOf(request: StlContentsRequest, maxTotal: number): { limit: number; offset: number } {
  const totalNum = request.totalNum ?? 0;
  if (totalNum > maxTotal)
    throw invalidFields([
      { field: 'totalNum', message: `must be at most ${maxTotal} (0 = all, up to ${maxTotal})` },
    ]);
  return { limit: totalNum === 0 ? maxTotal : totalNum, offset: (request.startNum ?? 1) - 1 };
}

/**
 * The columns of every field of form B: all but the body, which form B does not carry and which is
 * most of a row's bytes (2 KB in the bench's data, 6 of its 16 ms for 30 rows under load).
 */
const WHOLE_FORM_B = formBSelection(Object.keys(CONTENT_FORM_B_VALUES).join(','))!;
const WHOLE_FORM_B_COLUMNS = formColumns(WHOLE_FORM_B.columns);

type StlListContentsResponse = components['schemas']['StlListContentsResponse'];

type StlPage = JsonText<StlListContentsResponse> | StlListContentsResponse;

type StlReads = Pick<DbHandle, 'db' | 'provider' | 'costly' | 'reads'>;

/**
 * The page: its text, made of the records' kept texts where they still stand (recordTexts.ts), or
 * its records when it is large enough to be streamed. The site and channel this process chose for
 * the same choice are used unread when there are (keptChoicesOf), checked against the generation
 * read with the contents' versions; when it moved, the page is read again from a fresh choice.
 */
export async function listStlContents(
  database: StlReads,
  request: StlContentsRequest,
  maxTotal: number,
  now: Date = new Date(),
): Promise<StlPage> {
  const window = windowOf(request, maxTotal);
  return atKeptPlace(
    keptChoicesOf(database.reads),
    choiceKey(request),
    () => chooseSiteAndChannelIds(database.reads, request),
    (chosen, unchecked) => stlPage(database, request, window, now, chosen, unchecked),
  );
}

/**
 * The page of these site and channel, read at their generation. `unchecked`: the choice was not
 * read now, so nothing is picked and kept under its generation (only what is kept for it is used),
 * and the page is undefined unless the generation read with its contents is still that one.
 */
async function stlPage(
  { db, provider, costly, reads }: StlReads,
  request: StlContentsRequest,
  { limit, offset }: { limit: number; offset: number },
  now: Date,
  { site, channel }: ChosenIds,
  unchecked: boolean,
): Promise<StlPage | undefined> {
  const selection = formBSelection(request.fields);
  const scope = request.scope ?? 'Self';
  const channels = scope === 'All' ? undefined : { channelId: channel.id, scope };
  const filter = filterOf(request, site.id, channels, now);
  let { whereNow, orderBy, tallyWhere, matchWhere, readsHitCounters } = keptContentQuery(filter, provider);
  // Read with the site, before anything kept under it is picked (keptPicks.ts, recordTexts.ts);
  // when the choice was kept, read before only what is kept under it, and checked below.
  const generation = String(site.generation);
  const kept = <T>(key: string | undefined, pick: () => Promise<T>): Promise<T | undefined> =>
    unchecked
      ? Promise.resolve(keptPickIfAny<T>(reads, key, generation))
      : keptPick(reads, key, generation, pick);
  // PostgreSQL's planner weighs a scope from its statistics (cms import analyses the tables) and
  // chooses as hitsPlan would; without them it reads the scope first, as before the index.
  if (provider === 'sqlite' && request.order === 'Hits' && channels && tallyWhere) {
    const rows = offset + limit;
    const plan = await kept(pickKey('stl-hits-plan', [tallyWhere], [rows]), () =>
      hitsPlan(reads, tallyWhere, site.id, rows),
    );
    if (plan === undefined) return undefined;
    ({ whereNow, orderBy, matchWhere } = keptContentQuery({ ...filter, plan }, provider));
  }
  // The ids as a costly read (src/db/costlyReads.ts), then the contents' versions, then the rows of
  // the records whose kept text does not stand (recordTexts.ts).
  const database = { db, provider, reads };
  // The generation is read with the versions when the choice was not read now.
  const checked = unchecked ? site.id : undefined;
  // Kept while the site's generation stands, unless views move the order, the order is random, or
  // the filter moves with the clock (a `since` period); a pick not kept is read with its contents'
  // versions.
  const keep = !readsHitCounters && filter.orders !== 'random' && !PERIOD.test(request.since ?? '');
  let read: PlacedRead;
  if (keep) {
    const ids = await kept(pickKey('stl-page', [matchWhere, orderBy], [limit, offset]), () =>
      pickedIds(costly, pickOf(whereNow(), orderBy, limit, offset)),
    );
    if (ids === undefined) return undefined;
    read = await placedInOrder(database, ids, checked);
  } else {
    // A Hits walk reads each match's row (its channel, its hits): it reads the versions too.
    read = await placedPicked(
      { db, provider, reads, costly },
      { where: whereNow(), orderBy, limit, offset },
      readsHitCounters,
      checked,
    );
  }
  if (unchecked && read.generation !== generation) return undefined;
  const page = await pageRecords(
    database,
    read.placed,
    generation,
    selection === undefined ? 'B' : `B-${selection.key}`,
    selection === undefined ? WHOLE_FORM_B_COLUMNS : rowColumns(selection.columns),
    formBOf(selection),
  );
  if ('records' in page) return { value: page.records };
  // The texts as they are kept, written once into the page's bytes (not joined, then encoded).
  const parts = ['{"value":['];
  for (const [index, text] of page.texts.entries()) {
    if (index > 0) parts.push(',');
    parts.push(text);
  }
  parts.push(']}');
  return new JsonText(utf8Of(parts));
}

/**
 * How a Hits page of a channel scope is read, from the maintained counts (ContentTally, one row per
 * channel and review state). Walking the site's approved contents by hits (migration stl_hits_index)
 * reads about `rows` × site / scope of them before it holds its rows; reading the scope first reads
 * all of the scope's approved rows, then sorts them. The smaller wins: the bench's subtree (21,000
 * of 70,000) is walked in ~100 rows instead of 21,000; a small channel's few rows are read rather
 * than walking most of the site. SQLite's planner cannot weigh this: it keeps no statistics, and
 * takes the index that serves the order whatever the scope.
 */
async function hitsPlan(
  reads: DbHandle['reads'],
  tallyWhere: Sql,
  siteId: number,
  rows: number,
): Promise<'walk' | 'scope'> {
  const [counts] = await reads.rows<{ scope: number | bigint | null; site: number | bigint | null }>(
    sql`SELECT (SELECT SUM("count") FROM "ContentTally" ${tallyWhere}) AS "scope",
      (SELECT SUM("count") FROM "ContentTally" WHERE "siteId" = ${siteId} AND "checked" = ${true}) AS "site"`,
  );
  const scope = Number(counts?.scope ?? 0);
  const site = Number(counts?.site ?? 0);
  return scope * scope > rows * site ? 'walk' : 'scope';
}

/** How a row is answered: whole (form B), or only the selected fields. */
function formBOf(
  selection: FieldSelection<ContentFormB> | undefined,
): (row: Content) => ContentFormB | Partial<ContentFormB> {
  return selection === undefined ? toContentFormB : (row) => selectFields(row, selection);
}

export interface StlContentRequest extends SiteChoice, ChannelChoice {
  contentId: number;
  /** Answer only these fields (comma-separated names of ContentFormBFieldName). */
  fields?: string | undefined;
}

/** One approved content of the site, or of the channel when one is named. */
export async function getStlContent(
  { db, reads }: Pick<DbHandle, 'db' | 'reads'>,
  request: StlContentRequest,
): Promise<ContentFormB | Partial<ContentFormB>> {
  const selection = formBSelection(request.fields);
  const { site, channel } = hasChannelChoice(request)
    ? await chooseSiteAndChannelIds(reads, request)
    : { site: await chooseSiteIds(reads, request), channel: undefined };
  const content = await db.content.findFirst({
    where: {
      id: request.contentId,
      siteId: site.id,
      ...(channel && { channelId: channel.id }),
      checked: true,
      recycled: false,
    },
    ...(selection && { select: prismaSelect(selection) }),
  });
  if (!content) {
    const place = channel ? `channel ${channel.id} of site ${site.id}` : `site ${site.id}`;
    throw notFound(`No approved content ${request.contentId} in ${place}`);
  }
  return formBOf(selection)(content as Content);
}
