import { listStlContents } from '../../domain/stl/contents.ts';
import type { Handler } from '../types.ts';

/** The page as text (its records' kept texts, src/domain/contents/recordTexts.ts), or as records when large. */
export const stlListContents: Handler<'stlListContents'> = async ({ query }, services) =>
  listStlContents(services, query, services.config.maxPerPage);
