/*
 * Navigation URLs, site-relative, from the file-path rules (channel rule, else the site's, else the
 * defaults of the original system). A record's own linkUrl, when set, wins.
 */

export const DEFAULT_CHANNEL_FILE_PATH_RULE = '/channels/{@channelId}.html';
export const DEFAULT_CONTENT_FILE_PATH_RULE = '/contents/{@channelId}/{@contentId}.html';

export interface PathTokens {
  channelId: number;
  channelIndex?: string | null | undefined;
  contentId?: number | undefined;
  addDate?: Date | undefined;
}

const pad = (n: number) => String(n).padStart(2, '0');

export function expandFilePathRule(rule: string, tokens: PathTokens): string {
  return rule.replace(/\{@(\w+)\}/g, (whole, name: string) => {
    switch (name.toLowerCase()) {
      case 'channelid':
        return String(tokens.channelId);
      case 'channelindex':
        return tokens.channelIndex || String(tokens.channelId);
      case 'contentid':
        return tokens.contentId === undefined ? whole : String(tokens.contentId);
      case 'year':
        return tokens.addDate ? String(tokens.addDate.getFullYear()) : whole;
      case 'month':
        return tokens.addDate ? pad(tokens.addDate.getMonth() + 1) : whole;
      case 'day':
        return tokens.addDate ? pad(tokens.addDate.getDate()) : whole;
      default:
        return whole;
    }
  });
}

const firstSet = (...candidates: (string | null | undefined)[]) =>
  candidates.find((candidate): candidate is string => !!candidate && candidate.trim() !== '');

export function channelNavigationUrl(
  channel: {
    id: number;
    indexName: string | null;
    linkUrl: string;
    filePath: string;
    channelFilePathRule: string;
  },
  siteChannelRule: string,
): string {
  const linked = firstSet(channel.linkUrl, channel.filePath);
  if (linked) return linked;
  const rule = firstSet(channel.channelFilePathRule, siteChannelRule) ?? DEFAULT_CHANNEL_FILE_PATH_RULE;
  return expandFilePathRule(rule, { channelId: channel.id, channelIndex: channel.indexName });
}

export function contentNavigationUrl(
  content: { id: number; channelId: number; linkUrl: string | null; addDate: Date },
  channel: { indexName: string | null; contentFilePathRule: string },
  siteContentRule: string,
): string {
  const linked = firstSet(content.linkUrl);
  if (linked) return linked;
  const rule = firstSet(channel.contentFilePathRule, siteContentRule) ?? DEFAULT_CONTENT_FILE_PATH_RULE;
  return expandFilePathRule(rule, {
    channelId: content.channelId,
    channelIndex: channel.indexName,
    contentId: content.id,
    addDate: content.addDate,
  });
}
