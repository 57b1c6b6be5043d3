import type { Db, DbHandle } from '../../db/client.ts';
import type { Site } from '../../db/models.ts';
import type { components } from '../../generated/openapi.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import { chooseSite, type SiteChoice } from './choose.ts';

/*
 * The Site of docs/api/site-attributes.md: the stored row with every attribute, stored or default,
 * in its type.
 */

export type SiteForm = components['schemas']['Site'];

export function toSiteForm(site: Site): SiteForm {
  return {
    id: site.id,
    siteDir: site.siteDir,
    siteName: site.siteName,
    tableName: site.tableName,
    isRoot: site.isRoot,
    parentId: site.parentId,
    taxis: site.taxis,
    attributes: readSiteAttributes(site.attributes),
  };
}

/** Every site by taxis then id; the root site included (the original hid it by default). */
export async function listSites(db: Db): Promise<SiteForm[]> {
  const sites = await db.site.findMany({ orderBy: [{ taxis: 'asc' }, { id: 'asc' }] });
  return sites.map(toSiteForm);
}

export async function getSite(reads: DbHandle['reads'], choice: SiteChoice): Promise<SiteForm> {
  return toSiteForm(await chooseSite(reads, choice));
}
