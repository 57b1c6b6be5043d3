import type { Db } from '../../db/client.ts';
import type { components } from '../../generated/openapi.ts';
import { pagingOf } from '../accounts/paging.ts';
import { toAdministrator } from './view.ts';

type ListAdministratorsResponse = components['schemas']['ListAdministratorsResponse'];

/** One page of administrators by id. */
export async function listAdministrators(
  db: Db,
  page: number | string | undefined,
  perPage: number | string | undefined,
): Promise<ListAdministratorsResponse> {
  const rows = await db.administrator.findMany({ orderBy: { id: 'asc' }, ...pagingOf(page, perPage) });
  const now = new Date();
  return { value: rows.map((row) => toAdministrator(row, now)) };
}
