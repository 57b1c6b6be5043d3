import type { DbHandle } from '../../db/client.ts';
import { type Channel, MODEL_FIELDS, type Site } from '../../db/models.ts';
import { identifier, joinSql, type Sql, sql } from '../../db/sql.ts';
import { currentGeneration } from '../contents/counts.ts';
import { notFound } from '../errors.ts';

/*
 * How a template-tag read picks its site and channel (docs/design-decisions.md, "Template-tag
 * reads"): each parameter is a fallback for the one before it, and a name that matches nothing is a
 * 404, never a silent fallback to the next choice. The rows come through the driver's reads (one
 * kept statement each, as the model's rows), not Prisma's client: every template-tag read starts here.
 */

type Reads = DbHandle['reads'];

const columnsOf = (fields: readonly string[]): Sql => joinSql(fields.map((field) => identifier(field)));
/** A site's row, with its content generation (0 before its first write: counts.ts) read with it. */
const SITE_COLUMNS = sql`${columnsOf(MODEL_FIELDS.Site)}, ${currentGeneration(sql`"Site"."id"`)} AS "generation"`;

const CHANNEL_COLUMNS = columnsOf(MODEL_FIELDS.Channel);

/** The chosen site, with its content generation as it was when the site was read. */
export type ChosenSite = Site & { generation: number | bigint | string };

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

const sitesWhere = (reads: Reads, where: Sql) =>
  reads.rows<ChosenSite>(sql`SELECT ${SITE_COLUMNS} FROM "Site" ${where} ${BY_TAXIS}`);

/** `siteId`, else `siteDir` (nested directories allowed), else the root site, else the first site. */
export async function chooseSite(reads: Reads, choice: SiteChoice): Promise<ChosenSite> {
  if (choice.siteId !== undefined) {
    const [site] = await sitesWhere(reads, sql`WHERE "id" = ${choice.siteId}`);
    if (!site) throw notFound(`Site ${choice.siteId} does not exist`);
    return site;
  }
  if (choice.siteDir !== undefined) {
    const wanted = normalizeSiteDir(choice.siteDir);
    // Sites are few; comparing normalized directories finds a site however its path was written.
    const sites = await sitesWhere(reads, sql``);
    const site = sites.find((candidate) => normalizeSiteDir(candidate.siteDir) === wanted);
    if (!site) throw notFound(`No site has the directory '${choice.siteDir}'`);
    return site;
  }
  // The root site, else the first site.
  const [site] = await reads.rows<ChosenSite>(
    sql`SELECT ${SITE_COLUMNS} FROM "Site" ORDER BY CASE WHEN "isRoot" THEN 0 ELSE 1 END, "taxis", "id" LIMIT 1`,
  );
  if (!site) throw notFound('No site exists');
  return site;
}

export function hasChannelChoice(choice: ChannelChoice): boolean {
  return (
    choice.channelId !== undefined || choice.channelIndex !== undefined || choice.channelName !== undefined
  );
}

/** `channelId`, else `channelIndex`, else `channelName` (the first so named), else the root channel. */
export async function chooseChannel(reads: Reads, site: Site, choice: ChannelChoice): Promise<Channel> {
  const [where, described] =
    choice.channelId !== undefined
      ? [sql`"id" = ${choice.channelId}`, `Channel ${choice.channelId}`]
      : choice.channelIndex !== undefined
        ? [sql`"indexName" = ${choice.channelIndex}`, `No channel with index '${choice.channelIndex}'`]
        : choice.channelName !== undefined
          ? [sql`"channelName" = ${choice.channelName}`, `No channel named '${choice.channelName}'`]
          : [sql`"parentId" = ${0}`, 'No root channel'];
  const [channel] = await reads.rows<Channel>(
    sql`SELECT ${CHANNEL_COLUMNS} FROM "Channel" WHERE "siteId" = ${site.id} AND ${where} ${BY_TAXIS} LIMIT 1`,
  );
  if (!channel) {
    const suffix = choice.channelId !== undefined ? ' does not exist in site' : ' exists in site';
    throw notFound(`${described}${suffix} ${site.id}`);
  }
  return channel;
}
