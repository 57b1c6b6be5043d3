import type { Db } from '../../db/client.ts';
import type { components } from '../../generated/openapi.ts';
import { pagingOf } from '../accounts/paging.ts';
import { toUser } from './view.ts';

type ListUsersResponse = components['schemas']['ListUsersResponse'];

/** One page of users by id, with the count of all users, read in one transaction so they agree. */
export async function listUsers(
  db: Db,
  page: number | string | undefined,
  perPage: number | string | undefined,
): Promise<ListUsersResponse> {
  const { skip, take } = pagingOf(page, perPage);
  const [count, rows] = await db.$transaction([
    db.user.count(),
    db.user.findMany({ orderBy: { id: 'asc' }, skip, take }),
  ]);
  const now = new Date();
  return { count, users: rows.map((row) => toUser(row, now)) };
}
