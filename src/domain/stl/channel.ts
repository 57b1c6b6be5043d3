import type { DbHandle } from '../../db/client.ts';
import type { Channel } from '../../db/models.ts';
import type { components } from '../../generated/openapi.ts';
import { storedChannelFields } from '../channels/forms.ts';
import { readJsonObject } from '../jsonObject.ts';
import { splitList } from '../lists.ts';
import { type ChannelChoice, chooseSiteAndChannel, type SiteChoice } from './choose.ts';

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

// Module-level readers, not closures made per channel: a site's list builds 10,000 settings.
const flagOf = (extras: Record<string, unknown>, key: string, fallback: boolean) =>
  typeof extras[key] === 'boolean' ? (extras[key] as boolean) : fallback;
const textOf = (extras: Record<string, unknown>, key: string) =>
  typeof extras[key] === 'string' ? (extras[key] as string) : '';
const integerOf = (extras: Record<string, unknown>, key: string) =>
  Number.isInteger(extras[key]) ? (extras[key] as number) : 0;

function settingsOf(channel: Channel): ChannelFormBAttributes {
  const extras = readJsonObject(channel.extras);
  return {
    isChannelAddable: flagOf(extras, 'isChannelAddable', true),
    isContentAddable: flagOf(extras, 'isContentAddable', true),
    isChannelCreatable: flagOf(extras, 'isChannelCreatable', true),
    isContentCreatable: flagOf(extras, 'isContentCreatable', true),
    isCreateChannelIfContentChanged: channel.isCreateChannelIfContentChanged,
    createChannelIDsIfContentChanged: splitList(channel.createChannelIdsIfContentChanged ?? '').join(','),
    contentAttributesOfDisplay: textOf(extras, 'contentAttributesOfDisplay'),
    transChannelIds: textOf(extras, 'transChannelIds'),
    transChannelNames: textOf(extras, 'transChannelNames'),
    defaultTaxisType: channel.defaultTaxisType,
    transType: integerOf(extras, 'transType'),
    transSiteId: integerOf(extras, 'transSiteId'),
    transDoneType: integerOf(extras, 'transDoneType'),
    transIsAutomatic: flagOf(extras, 'transIsAutomatic', false),
    isPreviewContents: flagOf(extras, 'isPreviewContents', false),
  };
}

/** Form B without its settings (`additional`, `attributes`). */
type ChannelFormBRecord = Omit<ChannelFormB, 'additional' | 'attributes'>;

function formBRecord(channel: Channel, facts: ChannelFormBFacts): ChannelFormBRecord {
  const stored = storedChannelFields(channel);
  // One literal, field by field: spreading the stored fields into it and adding more made each
  // answer object a slow one (~12 µs a channel, most of a 10,000-channel list's time).
  return {
    id: stored.id,
    siteId: stored.siteId,
    parentId: stored.parentId,
    channelName: stored.channelName,
    indexName: stored.indexName,
    parentsCount: stored.parentsCount,
    childrenCount: stored.childrenCount,
    taxis: stored.taxis,
    addDate: stored.addDate,
    imageUrl: stored.imageUrl,
    content: stored.content,
    filePath: stored.filePath,
    channelFilePathRule: stored.channelFilePathRule,
    contentFilePathRule: stored.contentFilePathRule,
    linkUrl: stored.linkUrl,
    linkType: stored.linkType,
    channelTemplateId: stored.channelTemplateId,
    contentTemplateId: stored.contentTemplateId,
    keywords: stored.keywords,
    description: stored.description,
    contentModelPluginId: stored.contentModelPluginId,
    contentRelatedPluginIds: channel.contentRelatedPluginIds,
    parentsPath: channel.parentsPath,
    isLastNode: facts.isLastNode,
    groupNameCollection: splitList(channel.groupNames).join(','),
    contentNum: facts.contentNum,
  };
}

export function toChannelFormB(channel: Channel, facts: ChannelFormBFacts): ChannelFormB {
  const settings = settingsOf(channel);
  // One object under both names: an answer is only serialised, never changed.
  return Object.assign(formBRecord(channel, facts), { additional: settings, attributes: settings });
}

/**
 * A channel's form B as JSON text: what JSON.stringify(toChannelFormB(…)) gives. The settings'
 * text (half of each record, written twice) is made once per distinct source (`settingsTexts`, kept
 * by the caller for one list): most channels of a site have the same, default, settings.
 */
export function channelFormBText(
  channel: Channel,
  facts: ChannelFormBFacts,
  settingsTexts: Map<string, string>,
): string {
  // Every column settingsOf reads, unambiguously (null and 'null' differ).
  const key = JSON.stringify([
    channel.extras,
    channel.isCreateChannelIfContentChanged,
    channel.createChannelIdsIfContentChanged,
    channel.defaultTaxisType,
  ]);
  let settings = settingsTexts.get(key);
  if (settings === undefined) {
    settings = JSON.stringify(settingsOf(channel));
    settingsTexts.set(key, settings);
  }
  const record = JSON.stringify(formBRecord(channel, facts));
  return `${record.slice(0, -1)},"additional":${settings},"attributes":${settings}}`;
}

export async function getStlChannel(
  { db, reads }: Pick<DbHandle, 'db' | 'reads'>,
  choice: SiteChoice & ChannelChoice,
): Promise<ChannelFormB> {
  const { site, channel } = await chooseSiteAndChannel(reads, choice);
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
