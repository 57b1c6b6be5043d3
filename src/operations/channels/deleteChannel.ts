import { deleteChannel as removeChannel } from '../../domain/channels/delete.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';

export const deleteChannel: Handler<'deleteChannel'> = ({ path, header }, { db, actor }) =>
  removeChannel(db, path, actor, parseIfMatch(header['If-Match']));
