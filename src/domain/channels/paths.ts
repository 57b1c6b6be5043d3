import { readAsServed } from '../safeText.ts';

/**
 * Why a channel file path (or file-path rule) is refused, if it is: paths are relative to the
 * site's root (a leading `/` is allowed and means that root), so nothing may climb out of it or
 * name a host — judged as a web server would read the path (percent-decoded, look-alike
 * characters normalised).
 */
export function filePathProblem(given: string): string | undefined {
  if (given.length > 500) return 'must be at most 500 characters';
  const path = readAsServed(given);
  if (path === undefined) return 'must not contain broken percent-encoding';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\\]/.test(path)) return 'must not contain backslashes or control characters';
  if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('//'))
    return 'must be a path relative to the site, not a URL';
  if (path.split('/').some((segment) => segment === '..')) return "must not contain '..' segments";
  return undefined;
}
