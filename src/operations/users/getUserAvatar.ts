import { avatarUrlOf } from '../../domain/users/avatar.ts';
import type { Handler } from '../types.ts';

export const getUserAvatar: Handler<'getUserAvatar'> = async ({ path }, { db }) => ({
  value: await avatarUrlOf(db, path.id),
});
