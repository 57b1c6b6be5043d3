import { readsAsMember } from '../../domain/access.ts';
import { listContents as listSiteContents } from '../../domain/contents/list.ts';
import type { Handler } from '../types.ts';

// A site member's token lists approved contents only, whatever the filter asks. A page of selected
// fields may come as its kept text (src/domain/contents/pageTexts.ts).
export const listContents: Handler<'listContents'> = async ({ body, principal }, services) =>
  listSiteContents(
    services,
    readsAsMember(principal) ? { ...body, checked: true } : body,
    services.config.maxPerPage,
  );
