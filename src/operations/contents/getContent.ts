import { toContentFormA } from '../../domain/contents/forms.ts';
import { requireContent } from '../../domain/records.ts';
import type { Handler } from '../types.ts';

export const getContent: Handler<'getContent'> = async ({ path }, { db, reads }) =>
  toContentFormA(await requireContent(db, path.siteId, path.channelId, path.id, reads));
