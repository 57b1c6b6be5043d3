import { deleteContent as recycleContent } from '../../domain/contents/delete.ts';
import type { Handler } from '../types.ts';

export const deleteContent: Handler<'deleteContent'> = async ({ path }, { db }) => ({
  value: await recycleContent(db, path),
});
