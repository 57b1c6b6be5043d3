/*
 * Paths and links are judged as whoever finally reads them will read them: a web server or browser
 * percent-decodes (sometimes more than once) and many normalise look-alike characters, so `%2e%2e/`,
 * `..%2f` or `．．/` climb out of a directory just like `../`. Checks run on that reading.
 */

/** Layers of percent-encoding undone before judging (`%252e` is `%2e` is `.`). */
const DECODE_LAYERS = 3;

/**
 * The text percent-decoded (up to three layers) and NFKC-normalised, or undefined when its
 * percent-encoding is broken or encodes invalid UTF-8 (such as the overlong `%c0%af`): nothing
 * that cannot be read unambiguously is accepted.
 */
export function readAsServed(text: string): string | undefined {
  let current = text;
  for (let layer = 0; layer < DECODE_LAYERS && current.includes('%'); layer++) {
    try {
      current = decodeURIComponent(current);
    } catch {
      return undefined;
    }
  }
  return current.normalize('NFKC');
}

/** A character reference a browser would decode inside an attribute (`&#106;`, `&#x6a;`, `&colon;`). */
const CHARACTER_REFERENCE = /&(#|[a-z][a-z0-9]*;)/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Where the URL has a scheme: a `:` before any `/`, `?` or `#` (as a browser reads `foo:bar`). */
const SCHEME = /^([^/?#]*?):/;
/** A stand-in origin: a relative URL must resolve to it, else it names another host. */
const SITE = 'https://site.invalid';

/**
 * The kinds of URL-valued fields: every one may be a path on the site or an http(s) URL; a
 * link (`linkUrl`) may also be a `mailto:` or `tel:` link, which carry no script and no host.
 */
export type UrlKind = 'resource' | 'link';

const SCHEMES: Record<UrlKind, ReadonlySet<string>> = {
  resource: new Set(['http', 'https']),
  link: new Set(['http', 'https', 'mailto', 'tel']),
};

function readingProblem(reading: string, kind: UrlKind): string | undefined {
  if (CONTROL.test(reading)) return 'must not contain control characters';
  if (reading.includes('\\')) return 'must not contain backslashes';
  if (CHARACTER_REFERENCE.test(reading)) return 'must not contain HTML character references';
  // Browsers drop spaces around a URL and inside its scheme: judge the scheme without them.
  const compact = reading.replace(/\s/gu, '');
  const scheme = SCHEME.exec(compact)?.[1];
  if (scheme !== undefined) {
    const name = scheme.toLowerCase();
    if (!SCHEMES[kind].has(name)) return schemeMessage(kind);
    if ((name === 'http' || name === 'https') && !/^https?:\/\/[^/]/i.test(compact))
      return 'must be an http(s) URL of the form http(s)://host/…';
    return undefined;
  }
  // In-site: `@/` and `~/` are the original system's "site root" prefixes.
  const path = compact.replace(/^[@~](?=\/)/, '');
  if (path.startsWith('//')) return 'must not be a protocol-relative URL (//host)';
  if (path.split(/[/?#]/).some((segment) => segment === '..')) return "must not contain '..' segments";
  let resolved: URL;
  try {
    resolved = new URL(path, `${SITE}/`);
  } catch {
    return schemeMessage(kind);
  }
  return resolved.origin === SITE ? undefined : 'must stay on the site';
}

function schemeMessage(kind: UrlKind): string {
  return kind === 'link'
    ? 'must be a path on the site or an http, https, mailto or tel link'
    : 'must be a path on the site or an http(s) URL';
}

/**
 * Why a stored or derived URL is refused, if it is: the one rule for every URL-valued field
 * (links, images, videos, files, avatars, the site's addresses, navigation URLs). It is judged
 * both as written (what a browser reads) and as served (percent-decoded up to three layers and
 * NFKC-normalised): a path on the site that never climbs out of it (`..`) nor names another host
 * (`//host`, `\\host`), or an http(s) URL; never a script-bearing scheme (`javascript:`, `data:`,
 * `vbscript:`, `file:` …) however it is spelt. `""` means none and is fine.
 */
export function urlProblem(url: string, kind: UrlKind = 'resource'): string | undefined {
  if (url === '') return undefined;
  const read = readAsServed(url);
  if (read === undefined) return 'must not contain broken percent-encoding';
  return readingProblem(url.normalize('NFKC'), kind) ?? readingProblem(read, kind);
}

/**
 * Why a channel's index name is refused, if it is: `{@channelIndex}` puts it into a path as one
 * segment, so it holds only letters, digits, marks and `-`, `_`, `.`, `~` (what a segment holds
 * without encoding), and is not `.` or `..`.
 */
export function pathSegmentProblem(segment: string): string | undefined {
  if (segment.length > 255) return 'must be at most 255 characters';
  if (!/^[\p{L}\p{N}\p{M}_.~-]+$/u.test(segment))
    return "must hold only letters, digits, '-', '_', '.' and '~' (one path segment)";
  if (/^\.+$/.test(segment)) return "must not be '.' or '..'";
  return undefined;
}
