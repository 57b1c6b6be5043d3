import type { Db } from '../../db/client.ts';
import { notFound } from '../errors.ts';
import { urlProblem } from '../safeText.ts';

/** What a user without an avatar shows; a path on the site that serves the front end. */
export const DEFAULT_AVATAR_URL = '/assets/images/default-avatar.png';

/**
 * The address of the user's avatar, or the default one; not-found for an unknown id. A stored
 * address that breaks the URL rule (a row written before the rule, or by hand) is never served.
 */
export async function avatarUrlOf(db: Db, userId: number): Promise<string> {
  const user = await db.user.findUnique({ where: { id: userId }, select: { avatarUrl: true } });
  if (user === null) throw notFound(`User ${userId} does not exist`);
  return user.avatarUrl === '' || urlProblem(user.avatarUrl) !== undefined
    ? DEFAULT_AVATAR_URL
    : user.avatarUrl;
}
