import { pathSegmentProblem, urlProblem } from './safeText.ts';

/*
 * Navigation URLs, site-relative, from the file-path rules (channel rule, else the site's, else the
 * defaults of the original system). A record's own linkUrl, when set, wins. Every input is checked
 * when written, but a row written before those checks (or by hand) must not make a derived URL
 * unsafe either: each result passes the one URL rule (src/domain/safeText.ts) or the default rule's
 * address is answered instead.
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
        return tokens.channelIndex && pathSegmentProblem(tokens.channelIndex) === undefined
          ? tokens.channelIndex
          : String(tokens.channelId);
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

/** The first candidate that is set and safe as a link; `fallback()` when none is. */
function firstSafe(candidates: (string | null | undefined)[], fallback: () => string): string {
  const safe = candidates.find(
    (candidate): candidate is string =>
      !!candidate && candidate.trim() !== '' && urlProblem(candidate, 'link') === undefined,
  );
  return safe ?? fallback();
}

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
  const rule = firstSet(channel.channelFilePathRule, siteChannelRule) ?? DEFAULT_CHANNEL_FILE_PATH_RULE;
  const tokens = { channelId: channel.id, channelIndex: channel.indexName };
  return firstSafe([channel.linkUrl, channel.filePath, expandFilePathRule(rule, tokens)], () =>
    expandFilePathRule(DEFAULT_CHANNEL_FILE_PATH_RULE, tokens),
  );
}

export function contentNavigationUrl(
  content: { id: number; channelId: number; linkUrl: string | null; addDate: Date },
  channel: { indexName: string | null; contentFilePathRule: string },
  siteContentRule: string,
): string {
  const rule = firstSet(channel.contentFilePathRule, siteContentRule) ?? DEFAULT_CONTENT_FILE_PATH_RULE;
  const tokens = {
    channelId: content.channelId,
    channelIndex: channel.indexName,
    contentId: content.id,
    addDate: content.addDate,
  };
  return firstSafe([content.linkUrl, expandFilePathRule(rule, tokens)], () =>
    expandFilePathRule(DEFAULT_CONTENT_FILE_PATH_RULE, tokens),
  );
}
