import { updateContent as applyContentUpdate } from '../../domain/contents/update.ts';
import type { Handler } from '../types.ts';

/** A request without a body changes nothing but the modification dates, like an empty object. */
export const updateContent: Handler<'updateContent'> = ({ path, body }, { db }) =>
  applyContentUpdate(db, path, body ?? {});
