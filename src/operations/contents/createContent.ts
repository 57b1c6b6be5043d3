import { createContent as addContent } from '../../domain/contents/create.ts';
import type { Handler } from '../types.ts';

/** 200 with the record, as the original system answers this route, and where to read it again. */
export const createContent: Handler<'createContent'> = async ({ path, body, principal }, context) => {
  const content = await addContent(context, path, body, principal);
  return context.reply({
    status: 200,
    headers: { Location: `/api/v1/contents/${content.siteId}/${content.channelId}/${content.id}` },
    mediaType: 'application/json',
    body: content,
  });
};
