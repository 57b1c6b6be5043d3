import { readsAsMember } from '../../domain/access.ts';
import { formASelection, prismaSelect, selectFields } from '../../domain/contents/fields.ts';
import { toContentFormA } from '../../domain/contents/forms.ts';
import { notFound } from '../../domain/errors.ts';
import { requireContent } from '../../domain/records.ts';
import { selectionETag } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

/**
 * The record's strong ETag; If-None-Match is answered 304 by the dispatcher (src/http/routes.ts).
 * With `fields`, only their columns are read (and the version and approval the answer needs), and
 * the ETag names the selection too: two selections of one version are two representations.
 */
export const getContent: Handler<'getContent'> = async ({ path, query, principal }, { db, reads, reply }) => {
  const selection = formASelection(query.fields);
  const missing = () =>
    notFound(`Content ${path.id} does not exist in channel ${path.channelId} of site ${path.siteId}`);
  if (selection !== undefined) {
    const row = await db.content.findFirst({
      where: { id: path.id, siteId: path.siteId, channelId: path.channelId, recycled: false },
      select: prismaSelect(selection, ['checked']),
    });
    // To a site member an unapproved content does not exist.
    if (!row || (!row.checked && readsAsMember(principal))) throw missing();
    const content = row as Parameters<typeof selectFields>[0];
    return reply({
      ...withETag(selectFields(content, selection), content.version),
      headers: { ETag: selectionETag(content.version, selection.key) },
    });
  }
  const content = await requireContent(db, path.siteId, path.channelId, path.id, reads);
  // To a site member an unapproved content does not exist.
  if (!content.checked && readsAsMember(principal)) throw missing();
  return reply(withETag(toContentFormA(content), content.version));
};
