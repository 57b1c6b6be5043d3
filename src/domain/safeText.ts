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

const ALLOWED_LINK_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);

/**
 * Why a link (linkUrl) is refused, if it is: relative URLs and http(s), mailto and tel links are
 * fine; a scheme that can carry script (`javascript:`, `data:`, `vbscript:` …), however it is
 * spelt, is not. Browsers drop tabs and newlines inside a scheme, so they are dropped here too.
 */
export function linkUrlProblem(url: string): string | undefined {
  const read = readAsServed(url);
  if (read === undefined) return 'must not contain broken percent-encoding';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: browsers ignore these inside a URL's scheme
  const compact = read.replace(/[\u0000-\u0020\u007f]/g, '');
  if (/&#|&colon;|&tab;|&newline;/i.test(compact)) return 'must not contain HTML character references';
  const scheme = /^([^/?#]*?):/.exec(compact)?.[1];
  if (scheme === undefined) return undefined;
  return ALLOWED_LINK_SCHEMES.has(scheme.toLowerCase())
    ? undefined
    : 'must be a relative URL or an http, https, mailto or tel link';
}
