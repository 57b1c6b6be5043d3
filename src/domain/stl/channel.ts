import type { Db } from '../../db/client.ts';
import type { Channel } from '../../db/models.ts';
import type { components } from '../../generated/openapi.ts';
import { storedChannelFields } from '../channels/forms.ts';
import { readJsonObject } from '../jsonObject.ts';
import { splitList } from '../lists.ts';
import { type ChannelChoice, chooseChannel, chooseSite, type SiteChoice } from './choose.ts';

/*
 * Channel form B (the contract's ChannelFormB): the original system's view of a channel. Lists are comma-joined
 * text, and the per-channel settings kept in `extras` appear twice, as `additional` and as
 * `attributes`, each with its default when the channel never set it.
 */

export type ChannelFormB = components['schemas']['ChannelFormB'];
type ChannelFormBAttributes = components['schemas']['ChannelFormBAttributes'];

/** Facts about a channel that live outside its row. */
export interface ChannelFormBFacts {
  /** No sibling comes after it (by taxis, then id). */
  isLastNode: boolean;
  /** Its approved contents outside the recycle bin. */
  contentNum: number;
}

function settingsOf(channel: Channel): ChannelFormBAttributes {
  const extras = readJsonObject(channel.extras);
  const flag = (key: string, fallback: boolean) =>
    typeof extras[key] === 'boolean' ? (extras[key] as boolean) : fallback;
  const text = (key: string) => (typeof extras[key] === 'string' ? (extras[key] as string) : '');
  const integer = (key: string) => (Number.isInteger(extras[key]) ? (extras[key] as number) : 0);
  return {
    isChannelAddable: flag('isChannelAddable', true),
    isContentAddable: flag('isContentAddable', true),
    isChannelCreatable: flag('isChannelCreatable', true),
    isContentCreatable: flag('isContentCreatable', true),
    isCreateChannelIfContentChanged: channel.isCreateChannelIfContentChanged,
    createChannelIDsIfContentChanged: splitList(channel.createChannelIdsIfContentChanged ?? '').join(','),
    contentAttributesOfDisplay: text('contentAttributesOfDisplay'),
    transChannelIds: text('transChannelIds'),
    transChannelNames: text('transChannelNames'),
    defaultTaxisType: channel.defaultTaxisType,
    transType: integer('transType'),
    transSiteId: integer('transSiteId'),
    transDoneType: integer('transDoneType'),
    transIsAutomatic: flag('transIsAutomatic', false),
    isPreviewContents: flag('isPreviewContents', false),
  };
}

export function toChannelFormB(channel: Channel, facts: ChannelFormBFacts): ChannelFormB {
  const settings = settingsOf(channel);
  return {
    ...storedChannelFields(channel),
    contentRelatedPluginIds: channel.contentRelatedPluginIds,
    parentsPath: channel.parentsPath,
    isLastNode: facts.isLastNode,
    groupNameCollection: splitList(channel.groupNames).join(','),
    contentNum: facts.contentNum,
    additional: settings,
    attributes: { ...settings },
  };
}

export async function getStlChannel(db: Db, choice: SiteChoice & ChannelChoice): Promise<ChannelFormB> {
  const site = await chooseSite(db, choice);
  const channel = await chooseChannel(db, site, choice);
  const [laterSibling, contentNum] = await Promise.all([
    db.channel.findFirst({
      where: {
        siteId: site.id,
        parentId: channel.parentId,
        OR: [{ taxis: { gt: channel.taxis } }, { taxis: channel.taxis, id: { gt: channel.id } }],
      },
      select: { id: true },
    }),
    // The site too, so that the (siteId, recycled, channelId, checked, ...) index answers it alone.
    db.content.count({ where: { siteId: site.id, channelId: channel.id, checked: true, recycled: false } }),
  ]);
  return toChannelFormB(channel, { isLastNode: laterSibling === null, contentNum });
}
