import { describe, expect, test } from '@jest/globals';
import { filePathProblem } from '../../src/domain/channels/paths.ts';
import { linkUrlProblem, readAsServed } from '../../src/domain/safeText.ts';

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

describe('linkUrlProblem', () => {
  test.each([
    'javascript:alert(1)',
    ' JAVASCRIPT:alert(1)',
    'java\nscript:alert(1)',
    'javascript%3Aalert(1)',
    'data:text/html,x',
    'vbscript:x',
    '&#106;avascript:alert(1)',
    'file:///etc/passwd',
    '\uFF4Aavascript:alert(1)',
  ])('%j is refused', (url) => {
    expect(linkUrlProblem(url)).toBeDefined();
  });

  test.each([
    'https://a.example/x?y=1#z',
    'HTTP://A.EXAMPLE',
    '/x',
    'x.html',
    '#top',
    '?q=a:b',
    'mailto:a@b.c',
    'tel:+1',
    '',
  ])('%j is accepted', (url) => {
    expect(linkUrlProblem(url)).toBeUndefined();
  });
});
