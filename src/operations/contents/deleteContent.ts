import { deleteContent as recycleContent } from '../../domain/contents/delete.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

export const deleteContent: Handler<'deleteContent'> = async ({ path, header }, { db, actor }) => ({
  value: await recycleContent(db, path, actor, parseIfMatch(header['If-Match'])),
});
