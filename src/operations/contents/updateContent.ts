import { updateContent as applyContentUpdate } from '../../domain/contents/update.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

/** A request without a body changes nothing but the modification dates, like an empty object. */
export const updateContent: Handler<'updateContent'> = async ({ path, body, header }, context) => {
  const { content, version } = await applyContentUpdate(
    context,
    path,
    body ?? {},
    context.actor,
    parseIfMatch(header['If-Match']),
  );
  return context.reply(withETag(content, version));
};
