import type { Db } from '../../db/client.ts';
import { writeTransaction } from '../../db/transaction.ts';
import { forbidden, notFound } from '../errors.ts';
import { actorOf } from '../events/actor.ts';
import { recordEvent } from '../events/record.ts';
import type { Principal } from '../principal.ts';
import { urlProblem } from '../safeText.ts';
import { reencodeAvatar } from './avatarImage.ts';

/** What a user without an avatar shows; a path on the site that serves the front end. */
export const DEFAULT_AVATAR_URL = '/assets/images/default-avatar.png';

/** An avatar the user uploaded, as the service re-encoded it. */
export interface StoredAvatar {
  png: Uint8Array;
  width: number;
  height: number;
  version: number;
  updatedAt: Date;
}

/**
 * The user's avatar: the image uploaded for it when there is one, else the address of its avatar,
 * or the default one; not-found for an unknown id. A stored address that breaks the URL rule (a row
 * written before the rule, or by hand) is never served.
 */
export async function avatarOf(db: Db, userId: number): Promise<StoredAvatar | string> {
  const user = await db.user.findUnique({
    where: { id: userId },
    select: { avatarUrl: true, avatar: true },
  });
  if (user === null) throw notFound(`User ${userId} does not exist`);
  const { avatar } = user;
  if (avatar !== null) {
    const { bytes, width, height, version, updatedAt } = avatar;
    return { png: bytes, width, height, version, updatedAt };
  }
  return user.avatarUrl === '' || urlProblem(user.avatarUrl) !== undefined
    ? DEFAULT_AVATAR_URL
    : user.avatarUrl;
}

/** A user's token changes only its own avatar; a key (with `Users`) or an administrator any user's. */
function assertMayChangeAvatar(principal: Principal, userId: number): void {
  if (principal.kind === 'user' && principal.userId !== userId) {
    throw forbidden("A user's access token may change only its own avatar");
  }
}

/**
 * Stores the uploaded image as the user's avatar, re-encoded (src/domain/users/avatarImage.ts),
 * replacing the one before, and records `user.avatarChanged` in the same transaction. Answers the
 * avatar as stored.
 */
export async function uploadAvatar(
  db: Db,
  principal: Principal,
  userId: number,
  upload: Uint8Array,
): Promise<StoredAvatar> {
  assertMayChangeAvatar(principal, userId);
  // An unknown user is a 404 whatever was uploaded: before the image costs a decode.
  if ((await db.user.count({ where: { id: userId } })) === 0) throw notFound(`User ${userId} does not exist`);
  const image = reencodeAvatar(upload);
  const stored = await writeTransaction(db, async (tx) => {
    const user = await tx.user.findUnique({ where: { id: userId }, select: { id: true } });
    if (user === null) return null;
    const data = {
      bytes: new Uint8Array(image.png),
      width: image.width,
      height: image.height,
      updatedAt: new Date(),
    };
    const row = await tx.userAvatar.upsert({
      where: { userId },
      create: { userId, ...data },
      update: { ...data, version: { increment: 1 } },
    });
    await recordEvent(tx, {
      actor: actorOf(principal),
      type: 'user.avatarChanged',
      resourceId: userId,
      payload: { width: row.width, height: row.height, bytes: row.bytes.length, version: row.version },
    });
    return row;
  });
  if (stored === null) throw notFound(`User ${userId} does not exist`);
  return {
    png: stored.bytes,
    width: stored.width,
    height: stored.height,
    version: stored.version,
    updatedAt: stored.updatedAt,
  };
}
