import { describe, expect, test } from '@jest/globals';
import type { Channel } from '../../src/db/models.ts';
import { channelFormBText, toChannelFormB } from '../../src/domain/stl/channel.ts';

/*
 * The channel list writes each channel's form B as text, with the settings' text made once per
 * distinct source (src/domain/stl/channel.ts): it must be exactly what serialising the form B
 * object gives, whatever the settings, and a shared settings text must never stand for settings
 * that differ.
 */

const base: Channel = {
  id: 7,
  guid: 'g-7',
  siteId: 1,
  parentId: 2,
  channelName: 'Name "quoted" \u2028 ünï',
  indexName: null,
  parentsPath: '1,2',
  parentsCount: 2,
  childrenCount: 0,
  taxis: 3,
  addDate: new Date('2024-05-06T07:08:09.000Z'),
  imageUrl: '',
  content: '<p>body</p>',
  filePath: '',
  channelFilePathRule: '',
  contentFilePathRule: '',
  linkUrl: '',
  linkType: 'None',
  channelTemplateId: 0,
  contentTemplateId: 0,
  keywords: '',
  description: '',
  contentModelPluginId: '',
  contentRelatedPluginIds: '',
  groupNames: 'a,b',
  isCreateChannelIfContentChanged: true,
  createChannelIdsIfContentChanged: null,
  defaultTaxisType: 'OrderByTaxisDesc',
  listColumns: '',
  extras: '{}',
  createdDate: new Date('2024-05-06T07:08:09.000Z'),
  lastModifiedDate: new Date('2024-05-06T07:08:09.000Z'),
  version: 1,
} as Channel;

const variants: Partial<Channel>[] = [
  {},
  { extras: '{"isChannelAddable":false,"transType":3,"transChannelNames":"x\\"y"}' },
  { extras: 'not json' },
  { createChannelIdsIfContentChanged: 'null' },
  { createChannelIdsIfContentChanged: '3, 4,,5' },
  { isCreateChannelIfContentChanged: false },
  { defaultTaxisType: 'OrderByTaxis', extras: '{"isPreviewContents":true}' },
];

describe('channelFormBText', () => {
  test('is JSON.stringify of the form B, for every kind of settings, through one shared memo', () => {
    const memo = new Map<string, string>();
    // Twice over: the second round reads every settings text from the memo.
    for (let round = 0; round < 2; round++) {
      for (const [index, variant] of variants.entries()) {
        const channel = { ...base, ...variant, id: 100 + index } as Channel;
        const facts = { isLastNode: index % 2 === 0, contentNum: index };
        expect(channelFormBText(channel, facts, memo)).toBe(JSON.stringify(toChannelFormB(channel, facts)));
      }
    }
    // One text per distinct source, the column's own keys included: null and 'null' differ.
    expect(memo.size).toBe(variants.length);
  });
});
