import { formatDateTime } from '../../domain/dates.ts';
import { uploadAvatar } from '../../domain/users/avatar.ts';
import { strongETag } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

export const uploadUserAvatar: Handler<'uploadUserAvatar'> = async (
  { path, body, principal },
  { db, reply },
) => {
  const avatar = await uploadAvatar(db, principal, path.id, body.file.bytes);
  return reply({
    status: 200,
    mediaType: 'application/json',
    headers: { ETag: strongETag(avatar.version) },
    body: {
      value: {
        userId: path.id,
        width: avatar.width,
        height: avatar.height,
        size: avatar.png.byteLength,
        version: avatar.version,
        updatedAt: formatDateTime(avatar.updatedAt),
        url: `/api/v1/users/${path.id}/avatar`,
      },
    },
  });
};
