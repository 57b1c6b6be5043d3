import { readsAsMember } from '../../domain/access.ts';
import { toContentFormA } from '../../domain/contents/forms.ts';
import { notFound } from '../../domain/errors.ts';
import { requireContent } from '../../domain/records.ts';
import type { Handler } from '../types.ts';

export const getContent: Handler<'getContent'> = async ({ path, principal }, { db, reads }) => {
  const content = await requireContent(db, path.siteId, path.channelId, path.id, reads);
  // To a site member an unapproved content does not exist.
  if (!content.checked && readsAsMember(principal)) {
    throw notFound(`Content ${path.id} does not exist in channel ${path.channelId} of site ${path.siteId}`);
  }
  return toContentFormA(content);
};
