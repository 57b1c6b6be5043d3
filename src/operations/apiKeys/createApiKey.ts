import { createApiKey as issue } from '../../domain/apiKeys/manage.ts';
import { strongETag } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

/** The new key's ETag, for an If-Match on its first change. */
export const createApiKey: Handler<'createApiKey'> = async ({ body, principal }, { db, reply }) => {
  const { record, version } = await issue(db, principal, body);
  return reply({
    status: 201,
    headers: { ETag: strongETag(version) },
    mediaType: 'application/json',
    body: record,
  });
};
