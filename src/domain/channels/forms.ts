import type { Channel, Site } from '../../db/models.ts';
import type { components } from '../../generated/openapi.ts';
import { formatDateTime } from '../dates.ts';
import { readJsonObject } from '../jsonObject.ts';
import { splitList } from '../lists.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import { channelNavigationUrl } from '../urls.ts';
import { parseParentsPath } from './tree.ts';

/*
 * Channel form A: the stored channel, its derived tree fields, its navigation URL, and the
 * per-channel extras (display widths and the like) as fields of their own. `children` holds the
 * direct children, each in the same form plus value/label and `children: null`.
 */

export type ChannelFormA = components['schemas']['Channel'];
export type ChannelChild = components['schemas']['ChannelChild'];

/** Facts about a channel that live outside its row. */
export interface ChannelFacts {
  /** The channel holds draft contents (checkedLevel −99) that have not been published. */
  hasDraftContents: boolean;
}

/** The columns both forms of a channel show as stored (form A here, the template tag's form B). */
export function storedChannelFields(channel: Channel) {
  return {
    id: channel.id,
    siteId: channel.siteId,
    parentId: channel.parentId,
    channelName: channel.channelName,
    indexName: channel.indexName ?? '',
    parentsCount: channel.parentsCount,
    childrenCount: channel.childrenCount,
    taxis: channel.taxis,
    addDate: formatDateTime(channel.addDate),
    imageUrl: channel.imageUrl,
    content: channel.content,
    filePath: channel.filePath,
    channelFilePathRule: channel.channelFilePathRule,
    contentFilePathRule: channel.contentFilePathRule,
    linkUrl: channel.linkUrl,
    linkType: channel.linkType,
    channelTemplateId: channel.channelTemplateId,
    contentTemplateId: channel.contentTemplateId,
    keywords: channel.keywords,
    description: channel.description,
    contentModelPluginId: channel.contentModelPluginId,
  };
}

function channelFields(channel: Channel, site: Site, facts: ChannelFacts) {
  const siteAttributes = readSiteAttributes(site.attributes);
  const extras = readJsonObject(channel.extras);
  const fields = {
    ...storedChannelFields(channel),
    guid: channel.guid,
    parentsPath: parseParentsPath(channel.parentsPath),
    groupNames: splitList(channel.groupNames),
    createdDate: formatDateTime(channel.createdDate),
    lastModifiedDate: formatDateTime(channel.lastModifiedDate),
    tableName: site.tableName,
    isCreateChannelIfContentChanged: channel.isCreateChannelIfContentChanged,
    createChannelIdsIfContentChanged:
      channel.createChannelIdsIfContentChanged === null
        ? null
        : splitList(channel.createChannelIdsIfContentChanged).map(Number),
    listColumns: channel.listColumns,
    isPreviewContentsExists: facts.hasDraftContents,
    isAllContents: extras.isAllContents === true,
    defaultTaxisType: channel.defaultTaxisType,
    navigationUrl: channelNavigationUrl(channel, siteAttributes.channelFilePathRule),
  };
  // Extras that are plain integers or strings are shown as fields of their own, but never over a
  // field of the record.
  const extraFields = Object.fromEntries(
    Object.entries(extras).filter(
      ([key, value]) =>
        !(key in fields) &&
        (typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))),
    ),
  ) as Record<string, string | number>;
  return { ...extraFields, ...fields };
}

export function toChannelFormA(
  channel: Channel,
  site: Site,
  children: readonly Channel[],
  factsOf: (channelId: number) => ChannelFacts,
): ChannelFormA {
  return {
    ...channelFields(channel, site, factsOf(channel.id)),
    children: children.map(
      (child): ChannelChild => ({
        ...channelFields(child, site, factsOf(child.id)),
        value: child.id,
        label: child.channelName,
        children: null,
      }),
    ),
  };
}
