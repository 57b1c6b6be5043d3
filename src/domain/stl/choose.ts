import type { Db } from '../../db/client.ts';
import type { Channel, Site } from '../../db/models.ts';
import { notFound } from '../errors.ts';

/*
 * How a template-tag read picks its site and channel (docs/design-decisions.md, "Template-tag
 * reads"): each parameter is a fallback for the one before it, and a name that matches nothing is a
 * 404, never a silent fallback to the next choice.
 */

export interface SiteChoice {
  siteId?: number | undefined;
  siteDir?: string | undefined;
}

export interface ChannelChoice {
  channelId?: number | undefined;
  channelIndex?: string | undefined;
  channelName?: string | undefined;
}

const SITE_ORDER = [{ taxis: 'asc' as const }, { id: 'asc' as const }];

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

/** `siteId`, else `siteDir` (nested directories allowed), else the root site, else the first site. */
export async function chooseSite(db: Db, choice: SiteChoice): Promise<Site> {
  if (choice.siteId !== undefined) {
    const site = await db.site.findUnique({ where: { id: choice.siteId } });
    if (!site) throw notFound(`Site ${choice.siteId} does not exist`);
    return site;
  }
  if (choice.siteDir !== undefined) {
    const wanted = normalizeSiteDir(choice.siteDir);
    // Sites are few; comparing normalized directories finds a site however its path was written.
    const sites = await db.site.findMany({ orderBy: SITE_ORDER });
    const site = sites.find((candidate) => normalizeSiteDir(candidate.siteDir) === wanted);
    if (!site) throw notFound(`No site has the directory '${choice.siteDir}'`);
    return site;
  }
  const site =
    (await db.site.findFirst({ where: { isRoot: true }, orderBy: SITE_ORDER })) ??
    (await db.site.findFirst({ orderBy: SITE_ORDER }));
  if (!site) throw notFound('No site exists');
  return site;
}

export function hasChannelChoice(choice: ChannelChoice): boolean {
  return (
    choice.channelId !== undefined || choice.channelIndex !== undefined || choice.channelName !== undefined
  );
}

const CHANNEL_ORDER = [{ taxis: 'asc' as const }, { id: 'asc' as const }];

/** `channelId`, else `channelIndex`, else `channelName` (the first so named), else the root channel. */
export async function chooseChannel(db: Db, site: Site, choice: ChannelChoice): Promise<Channel> {
  const [where, described] =
    choice.channelId !== undefined
      ? [{ id: choice.channelId }, `Channel ${choice.channelId}`]
      : choice.channelIndex !== undefined
        ? [{ indexName: choice.channelIndex }, `No channel with index '${choice.channelIndex}'`]
        : choice.channelName !== undefined
          ? [{ channelName: choice.channelName }, `No channel named '${choice.channelName}'`]
          : [{ parentId: 0 }, 'No root channel'];
  const channel = await db.channel.findFirst({
    where: { siteId: site.id, ...where },
    orderBy: CHANNEL_ORDER,
  });
  if (!channel) {
    const suffix = choice.channelId !== undefined ? ' does not exist in site' : ' exists in site';
    throw notFound(`${described}${suffix} ${site.id}`);
  }
  return channel;
}
