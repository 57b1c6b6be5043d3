/*
 * Group names, tag names and similar lists are kept as comma-joined text. Input may come as such a
 * string or as an array; either way items are trimmed, empty ones dropped and duplicates removed
 * (first occurrence wins), so the stored form is canonical.
 */

export function splitList(joined: string): string[] {
  return joined === '' ? [] : normalizeList(joined);
}

export function normalizeList(input: string | readonly string[]): string[] {
  const items = typeof input === 'string' ? input.split(',') : input.flatMap((item) => item.split(','));
  const seen = new Set<string>();
  const result: string[] = [];
  for (const raw of items) {
    const item = raw.trim();
    if (item !== '' && !seen.has(item)) {
      seen.add(item);
      result.push(item);
    }
  }
  return result;
}

export function joinList(input: string | readonly string[]): string {
  return normalizeList(input).join(',');
}
