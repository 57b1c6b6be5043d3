import type { FieldProblem } from './errors.ts';

/*
 * Some fields have a second name (a content's `content` is its `body`; a channel's `channelIndex`
 * is its `indexName`), because clients of the original system send either. One rule for all of
 * them: either name may be sent; both with the same value is fine (a record read back is sent back
 * as it is); both with different values is a problem on the alias, since no choice between them
 * would be right for every client.
 */
export function resolveAlias<T>(
  canonical: { field: string; value: T | undefined },
  alias: { field: string; value: T | undefined },
  problems: FieldProblem[],
): T | undefined {
  if (canonical.value !== undefined && alias.value !== undefined && canonical.value !== alias.value) {
    problems.push({
      field: alias.field,
      message: `differs from ${canonical.field} (${alias.field} is its alias; send one, or both alike)`,
    });
  }
  return canonical.value ?? alias.value;
}
