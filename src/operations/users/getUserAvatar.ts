import { avatarOf } from '../../domain/users/avatar.ts';
import { strongETag } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

/**
 * An uploaded avatar is sent as its PNG: always revalidated (it may be replaced at any time), a 304
 * while the ETag still names its version (the dispatcher answers If-None-Match), and `nosniff` so
 * that no browser takes the bytes for anything but the image they are.
 */
export const getUserAvatar: Handler<'getUserAvatar'> = async ({ path }, { db, reply }) => {
  const avatar = await avatarOf(db, path.id);
  if (typeof avatar === 'string')
    return reply({ status: 200, mediaType: 'application/json', body: { value: avatar } });
  return reply({
    status: 200,
    mediaType: 'image/png',
    body: avatar.png,
    headers: {
      ETag: strongETag(avatar.version),
      'Cache-Control': 'public, no-cache',
      'X-Content-Type-Options': 'nosniff',
    },
  });
};
