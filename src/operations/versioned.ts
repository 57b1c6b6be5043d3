import { strongETag } from '../domain/versions.ts';

/**
 * The 200 answer of one record with its strong ETag (docs/api/conditional-writes.md), for the
 * handlers that read or update a single content or channel.
 */
export function withETag<B>(body: B, version: number) {
  return {
    status: 200 as const,
    headers: { ETag: strongETag(version) },
    mediaType: 'application/json' as const,
    body,
  };
}
