/**
 * The object a stored JSON object text holds (site attributes, channel extras, content settings).
 * Anything else — invalid JSON, an array, a scalar — reads as an empty object: a read must never
 * fail because of one odd value written by an older version or by hand.
 */
export function readJsonObject(text: string): Record<string, unknown> {
  // Most stored values are the column's default; a list of 10,000 channels reads one each.
  if (text === '{}') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
