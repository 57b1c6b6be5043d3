import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';

/*
 * Every relative link of README.md and docs/**\/*.md leads somewhere: the file or folder exists,
 * and an `#anchor` names a heading of the page it points at (GitHub's heading ids). Links to other
 * sites are not fetched: tests reach nothing outside the machine.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The markdown pages of the documentation, relative to the root. */
function documentationPages(): string[] {
  const pages = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) pages.push(path);
    }
  };
  walk('docs');
  return pages.sort();
}

/** The text of a page without fenced code blocks and inline code, where brackets are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The targets of inline links `[text](target)` and images, in order. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (match) => match[1] ?? '',
  );
}

/** GitHub's id of a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = (heading ?? '')
      .replace(/<[^>]+>/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

/** What is wrong with each relative link of `page` (relative to `root`); empty when all resolve. */
function brokenLinks(root: string, page: string): string[] {
  const text = readFileSync(join(root, page), 'utf8');
  const problems: string[] = [];
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [pathPart = '', anchor] = target.split('#', 2);
    const file = pathPart === '' ? join(root, page) : resolve(dirname(join(root, page)), decodeURI(pathPart));
    if (relative(root, file).startsWith('..')) {
      problems.push(`${page}: ${target} leaves the repository`);
      continue;
    }
    if (!existsSync(file)) {
      problems.push(`${page}: ${target} does not exist`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (!file.endsWith('.md') || statSync(file).isDirectory()) {
      problems.push(`${page}: ${target} has an anchor but is not a markdown page`);
    } else if (!headingIds(readFileSync(file, 'utf8')).has(anchor)) {
      problems.push(`${page}: ${target} names no heading of ${relative(root, file)}`);
    }
  }
  return problems;
}

describe('documentation links', () => {
  test('every relative link of README.md and docs/ resolves, anchors included', () => {
    const pages = documentationPages();
    expect(pages).toEqual(expect.arrayContaining(['README.md', join('docs', 'README.md')]));
    expect(pages.flatMap((page) => brokenLinks(ROOT, page))).toEqual([]);
  });

  test('README.md links into docs/ and keeps the two commands a newcomer runs', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm ci && npm test');
    expect(linkTargets(readme)).toEqual(expect.arrayContaining(['docs/README.md']));
  });

  test('links, anchors and headings are read as GitHub reads them', () => {
    const page = [
      '# Top',
      '## SQL sandbox (`stl/sqlContents`)',
      '## Rate limits',
      '## Rate limits',
      'See [a](other.md#x), ![img](pic.png "title") and [b](#rate-limits-1), not `[c](code.md)`.',
      '```',
      '[d](fenced.md)',
      '```',
      '[e](https://example.com/#y)',
    ].join('\n');
    expect(linkTargets(page)).toEqual(['other.md#x', 'pic.png', '#rate-limits-1', 'https://example.com/#y']);
    expect([...headingIds(page)]).toEqual([
      'top',
      'sql-sandbox-stlsqlcontents',
      'rate-limits',
      'rate-limits-1',
    ]);
  });

  test('a missing file, a missing anchor and a link out of the repository are each reported', () => {
    const problems = brokenLinks(ROOT, join('test', 'fixtures', 'docs-links', 'broken.md'));
    expect(problems).toEqual([
      `${join('test', 'fixtures', 'docs-links', 'broken.md')}: missing.md does not exist`,
      `${join('test', 'fixtures', 'docs-links', 'broken.md')}: ../../../README.md#no-such-heading names no heading of README.md`,
      `${join('test', 'fixtures', 'docs-links', 'broken.md')}: #nowhere names no heading of ${join('test', 'fixtures', 'docs-links', 'broken.md')}`,
      `${join('test', 'fixtures', 'docs-links', 'broken.md')}: ../../../../elsewhere.md leaves the repository`,
    ]);
  });
});
