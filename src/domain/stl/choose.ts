import type { DbHandle } from '../../db/client.ts';
import { type Channel, MODEL_FIELDS, type Site } from '../../db/models.ts';
import { identifier, joinSql, type Sql, sql } from '../../db/sql.ts';
import { KeptPerOwner } from '../../recentlyUsed.ts';
import { currentGeneration } from '../contents/counts.ts';
import { notFound } from '../errors.ts';

/*
 * How a template-tag read picks its site and channel (docs/design-decisions.md, "Template-tag
 * reads"): each parameter is a fallback for the one before it, and a name that matches nothing is a
 * 404, never a silent fallback to the next choice. The rows come through the driver's reads (one
 * prepared statement each, as the model's rows), not Prisma's client: every template-tag read
 * starts here.
 */

type Reads = DbHandle['reads'];

/**
 * What a choice reads of the site and of its channel: every column (the reads that answer them), or
 * the ids alone (stl/contents and stl/content, which need nothing else) — a PostgreSQL row of every
 * Site and Channel column costs the driver and the database several times the ids' row.
 */
interface ChoiceColumns<S, C> {
  siteFields: readonly (keyof S & string)[];
  channelFields: readonly (keyof C & string)[];
  /** The site's columns, qualified (a read of a site and its channel joins them), and its generation. */
  site: Sql;
  channel: Sql;
  /** The channel's columns beside the site's in one row: named `channel_<field>`. */
  siteAndChannel: Sql;
}

/** Channel columns beside the site's in one row are named with this prefix. */
const CHANNEL_PREFIX = 'channel_';

/** The least a choice reads: the site's id and directory (a `siteDir` is compared in the process), the channel's id. */
type SiteRead = Pick<Site, 'id' | 'siteDir'>;
type ChannelRead = Pick<Channel, 'id'>;

function choiceColumns<S extends SiteRead, C extends ChannelRead>(
  siteFields: readonly (keyof S & string)[],
  channelFields: readonly (keyof C & string)[],
): ChoiceColumns<S, C> {
  // The site's content generation (0 before its first write: counts.ts) is read with it.
  const site = sql`${joinSql(siteFields.map((field) => sql`"Site".${identifier(field)}`))}, ${currentGeneration(sql`"Site"."id"`)} AS "generation"`;
  return {
    siteFields,
    channelFields,
    site,
    channel: joinSql(channelFields.map((field) => identifier(field))),
    siteAndChannel: sql`${site}, ${joinSql(
      channelFields.map(
        (field) => sql`"c".${identifier(field)} AS ${identifier(`${CHANNEL_PREFIX}${field}`)}`,
      ),
    )}`,
  };
}

const ROWS = choiceColumns<Site, Channel>(MODEL_FIELDS.Site, MODEL_FIELDS.Channel);
const IDS = choiceColumns<SiteRead, ChannelRead>(['id', 'siteDir'], ['id']);

/** A site as read, with its content generation as it was when the site was read. */
type WithGeneration<S> = S & { generation: number | bigint | string };

/** The chosen site, every column. */
export type ChosenSite = WithGeneration<Site>;

/** The ids of a chosen site and channel, with the site's content generation (and directory) read with them. */
export interface ChosenIds {
  site: WithGeneration<SiteRead>;
  channel: ChannelRead;
}

export interface SiteChoice {
  siteId?: number | undefined;
  siteDir?: string | undefined;
}

export interface ChannelChoice {
  channelId?: number | undefined;
  channelIndex?: string | undefined;
  channelName?: string | undefined;
}

const BY_TAXIS = sql`ORDER BY "taxis", "id"`;

/** `a\b/`, `/a//b` and `a/b` name the same nested directory. */
export function normalizeSiteDir(dir: string): string {
  return dir
    .trim()
    .replaceAll('\\', '/')
    .split('/')
    .filter((part) => part !== '')
    .join('/')
    .toLowerCase();
}

const sitesWhere = <S, C>(reads: Reads, where: Sql, columns: ChoiceColumns<S, C>) =>
  reads.prepared<WithGeneration<S>>(sql`SELECT ${columns.site} FROM "Site" ${where} ${BY_TAXIS}`);

/** The root site, else the first site: a condition on `"Site"."id"`. */
const ROOT_SITE = sql`"Site"."id" = (SELECT "id" FROM "Site" ORDER BY CASE WHEN "isRoot" THEN 0 ELSE 1 END, "taxis", "id" LIMIT 1)`;

/**
 * The condition on `"Site"` that names the chosen site, and the 404's sentence when no row meets it;
 * undefined for `siteDir`, which is compared in the process (see chooseSite).
 */
function siteCondition(choice: SiteChoice): [Sql, string] | undefined {
  if (choice.siteId !== undefined)
    return [sql`"Site"."id" = ${choice.siteId}`, `Site ${choice.siteId} does not exist`];
  if (choice.siteDir !== undefined) return undefined;
  return [ROOT_SITE, 'No site exists'];
}

/** `siteId`, else `siteDir` (nested directories allowed), else the root site, else the first site. */
export function chooseSite(reads: Reads, choice: SiteChoice): Promise<ChosenSite> {
  return siteOf(reads, choice, ROWS);
}

/** As chooseSite, reading only the site's id and directory (and its generation). */
export function chooseSiteIds(reads: Reads, choice: SiteChoice): Promise<WithGeneration<SiteRead>> {
  return siteOf(reads, choice, IDS);
}

async function siteOf<S extends SiteRead, C>(
  reads: Reads,
  choice: SiteChoice,
  columns: ChoiceColumns<S, C>,
): Promise<WithGeneration<S>> {
  const condition = siteCondition(choice);
  if (condition !== undefined) {
    const [site] = await sitesWhere(reads, sql`WHERE ${condition[0]}`, columns);
    if (!site) throw notFound(condition[1]);
    return site;
  }
  const wanted = normalizeSiteDir(choice.siteDir ?? '');
  // Sites are few; comparing normalized directories finds a site however its path was written.
  const sites = await sitesWhere(reads, sql``, columns);
  const site = sites.find((candidate) => normalizeSiteDir(candidate.siteDir) === wanted);
  if (!site) throw notFound(`No site has the directory '${choice.siteDir}'`);
  return site;
}

export function hasChannelChoice(choice: ChannelChoice): boolean {
  return (
    choice.channelId !== undefined || choice.channelIndex !== undefined || choice.channelName !== undefined
  );
}

/** The condition on `"Channel"` that names the chosen channel, and the start of the 404's sentence. */
function channelCondition(choice: ChannelChoice): [Sql, string] {
  if (choice.channelId !== undefined) return [sql`"id" = ${choice.channelId}`, `Channel ${choice.channelId}`];
  if (choice.channelIndex !== undefined)
    return [sql`"indexName" = ${choice.channelIndex}`, `No channel with index '${choice.channelIndex}'`];
  if (choice.channelName !== undefined)
    return [sql`"channelName" = ${choice.channelName}`, `No channel named '${choice.channelName}'`];
  return [sql`"parentId" = ${0}`, 'No root channel'];
}

function channelNotFound(choice: ChannelChoice, described: string, siteId: number) {
  const suffix = choice.channelId !== undefined ? ' does not exist in site' : ' exists in site';
  return notFound(`${described}${suffix} ${siteId}`);
}

/** `channelId`, else `channelIndex`, else `channelName` (the first so named), else the root channel. */
async function chooseChannel<S, C>(
  reads: Reads,
  site: SiteRead,
  choice: ChannelChoice,
  columns: ChoiceColumns<S, C>,
): Promise<C> {
  const [where, described] = channelCondition(choice);
  const [channel] = await reads.prepared<C>(
    sql`SELECT ${columns.channel} FROM "Channel" WHERE "siteId" = ${site.id} AND ${where} ${BY_TAXIS} LIMIT 1`,
  );
  if (!channel) throw channelNotFound(choice, described, site.id);
  return channel;
}

/**
 * The site and the channel of a read, in one statement where the site is named by id or is the
 * root (the channel joined through the subquery chooseChannel would send), else as two reads:
 * every template-tag read of a channel starts here, and on PostgreSQL a statement is a round trip.
 */
export async function chooseSiteAndChannel(
  reads: Reads,
  choice: SiteChoice & ChannelChoice,
): Promise<{ site: ChosenSite; channel: Channel }> {
  return chooseBoth(reads, choice, ROWS);
}

/** As chooseSiteAndChannel, reading only the ids (and the site's generation and directory). */
export function chooseSiteAndChannelIds(
  reads: Reads,
  choice: SiteChoice & ChannelChoice,
): Promise<ChosenIds> {
  return chooseBoth(reads, choice, IDS);
}

/** Choices kept per owner (a database client's reads), the least recently used let go first. */
const KEPT_CHOICES = 256;

/**
 * The ids this process chose lately, with the site's generation they were chosen at: still the
 * answer while that generation is the site's (every write to a site's channels advances it;
 * contents of a deleted site are deleted with it), which the page read at them checks
 * (atKeptPlace, src/domain/contents/keptPicks.ts). This spares a template-tag page the choice's
 * statement, a round trip on PostgreSQL.
 */
const keptChoices = new KeptPerOwner<string, ChosenIds>(KEPT_CHOICES);

export const keptChoicesOf = (reads: Reads) => keptChoices.of(reads);

/**
 * What a choice is kept under: only a choice that names its site by id. Which site is the root (or
 * has a directory) is the Site table's to say, and a site's writes do not advance its content
 * generation; which channel a site's choice names is its channels' to say, and they do.
 */
export function choiceKey(choice: SiteChoice & ChannelChoice): string | undefined {
  if (choice.siteId === undefined) return undefined;
  const { siteId, channelId, channelIndex, channelName } = choice;
  return JSON.stringify([siteId, channelId ?? null, channelIndex ?? null, channelName ?? null]);
}

async function chooseBoth<S extends SiteRead, C extends ChannelRead>(
  reads: Reads,
  choice: SiteChoice & ChannelChoice,
  columns: ChoiceColumns<S, C>,
): Promise<{ site: WithGeneration<S>; channel: C }> {
  const condition = siteCondition(choice);
  if (condition === undefined) {
    const site = await siteOf(reads, choice, columns);
    return { site, channel: await chooseChannel(reads, site, choice, columns) };
  }
  const [where, described] = channelCondition(choice);
  const [row] = await reads.prepared<Record<string, unknown>>(
    sql`SELECT ${columns.siteAndChannel} FROM "Site" LEFT JOIN "Channel" AS "c" ON "c"."id" = (
      SELECT "id" FROM "Channel" WHERE "siteId" = "Site"."id" AND ${where} ${BY_TAXIS} LIMIT 1)
    WHERE ${condition[0]}`,
  );
  if (!row) throw notFound(condition[1]);
  const site = {} as Record<string, unknown>;
  const channel = {} as Record<string, unknown>;
  for (const field of columns.siteFields) site[field] = row[field];
  site.generation = row.generation;
  for (const field of columns.channelFields) channel[field] = row[`${CHANNEL_PREFIX}${field}`];
  if (channel.id === null) throw channelNotFound(choice, described, Number(site.id));
  return { site: site as WithGeneration<S>, channel: channel as C };
}
