import { updateContent as applyContentUpdate } from '../../domain/contents/update.ts';
import type { Handler } from '../types.ts';

export const updateContent: Handler<'updateContent'> = ({ path, body }, { db }) =>
  applyContentUpdate(db, path, body);
