import { describe, expect, test } from '@jest/globals';
import { filePathProblem } from '../../src/domain/channels/paths.ts';
import { pathSegmentProblem, readAsServed, urlProblem } from '../../src/domain/safeText.ts';
import { channelNavigationUrl, contentNavigationUrl } from '../../src/domain/urls.ts';
import { ACCEPTED_URLS, REFUSED_URLS } from '../support/urls.ts';

describe('readAsServed', () => {
  test.each([
    ['%2e%2e/', '../'],
    ['%252e%252e%252f', '../'],
    ['\uFF0E\uFF0E/', '../'],
    ['\u2025/', '../'],
    ['plain/path.html', 'plain/path.html'],
  ])('%j reads as %j', (given, read) => {
    expect(readAsServed(given)).toBe(read);
  });

  test.each(['%c0%af', '%zz', '100%'])('%j cannot be read unambiguously', (given) => {
    expect(readAsServed(given)).toBeUndefined();
  });
});

describe('filePathProblem', () => {
  test.each([
    '%2e%2e/x',
    '..%2fx',
    'a/%2E%2E/b',
    '%c0%ae%c0%ae/',
    'a%00b',
    '\uFF0E\uFF0E/x',
    '\u2024\u2024/x',
    '%5c..%5cx',
  ])('%j is refused', (path) => {
    expect(filePathProblem(path)).toBeDefined();
  });

  test.each(['/news/{@channelId}.html', 'a/b.c/d', '/', '', '/a..b/c.html'])('%j is accepted', (path) => {
    expect(filePathProblem(path)).toBeUndefined();
  });
});

describe('urlProblem: the one rule for URL-valued fields', () => {
  test.each(REFUSED_URLS)('%j is refused (%s)', (url) => {
    expect(urlProblem(url)).toEqual(expect.any(String));
    expect(urlProblem(url, 'link')).toEqual(expect.any(String));
  });

  test.each(ACCEPTED_URLS)('%j is accepted', (url) => {
    expect(urlProblem(url)).toBeUndefined();
    expect(urlProblem(url, 'link')).toBeUndefined();
  });

  test.each(['mailto:news@example.org', 'tel:+33100000000', 'MAILTO:a@b.c'])(
    '%j is a link, not an image, video, file or avatar',
    (url) => {
      expect(urlProblem(url, 'link')).toBeUndefined();
      expect(urlProblem(url)).toBe('must be a path on the site or an http(s) URL');
    },
  );

  test('the messages say what is wrong', () => {
    expect(urlProblem('javascript:x')).toBe('must be a path on the site or an http(s) URL');
    expect(urlProblem('javascript:x', 'link')).toBe(
      'must be a path on the site or an http, https, mailto or tel link',
    );
    expect(urlProblem('//evil')).toBe('must not be a protocol-relative URL (//host)');
    expect(urlProblem('a\\b')).toBe('must not contain backslashes');
    expect(urlProblem('../x')).toBe("must not contain '..' segments");
    expect(urlProblem('java\nscript:x')).toBe('must not contain control characters');
    expect(urlProblem('&#106;avascript:x')).toBe('must not contain HTML character references');
    expect(urlProblem('%zz')).toBe('must not contain broken percent-encoding');
  });
});

describe('pathSegmentProblem: what an index name may hold', () => {
  test.each(['news', 'news-tech', 'a_b.c~d', '新闻', 'café', '2024'])('%j is one segment', (name) => {
    expect(pathSegmentProblem(name)).toBeUndefined();
  });

  test.each([
    'javascript:alert(1)',
    'a/b',
    '..',
    '.',
    'a\\b',
    'a b',
    'a?b',
    'a#b',
    'a%2fb',
    'a\nb',
    '',
    'x'.repeat(256),
  ])('%j is not', (name) => {
    expect(pathSegmentProblem(name)).toEqual(expect.any(String));
  });
});

describe('derived navigation URLs', () => {
  const channel = (indexName: string | null, extra: { linkUrl?: string; filePath?: string } = {}) => ({
    id: 7,
    indexName,
    linkUrl: extra.linkUrl ?? '',
    filePath: extra.filePath ?? '',
    channelFilePathRule: '',
  });

  test('{@channelIndex} expands to a safe index name', () => {
    expect(channelNavigationUrl(channel('news'), '/{@channelIndex}/index.html')).toBe('/news/index.html');
  });

  test.each([
    ['javascript:alert(1)//', '{@channelIndex}'],
    ['..', '/{@channelIndex}/../x.html'],
    ['/evil.example', '/{@channelIndex}'],
    ['a/../..', '/{@channelIndex}/index.html'],
  ])('a stored index name %j cannot make %j unsafe: the channel id stands in', (indexName, rule) => {
    const url = channelNavigationUrl(channel(indexName), rule);
    expect(urlProblem(url, 'link')).toBeUndefined();
    expect(url).not.toContain(indexName);
  });

  test('stored links and paths that break the rule are never answered', () => {
    expect(channelNavigationUrl(channel(null, { linkUrl: 'javascript:alert(1)' }), '')).toBe(
      '/channels/7.html',
    );
    expect(channelNavigationUrl(channel(null, { filePath: '//evil.example' }), '')).toBe('/channels/7.html');
    expect(channelNavigationUrl(channel(null), '//evil.example/{@channelId}')).toBe('/channels/7.html');
    const content = { id: 3, channelId: 7, linkUrl: 'data:text/html,x', addDate: new Date(2024, 0, 2) };
    expect(contentNavigationUrl(content, { indexName: 'news', contentFilePathRule: '' }, '')).toBe(
      '/contents/7/3.html',
    );
    expect(
      contentNavigationUrl(
        { ...content, linkUrl: null },
        { indexName: 'javascript:x', contentFilePathRule: '{@channelIndex}/{@contentId}' },
        '',
      ),
    ).toBe('7/3');
  });
});
