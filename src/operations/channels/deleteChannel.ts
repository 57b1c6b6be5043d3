import { deleteChannel as removeChannel } from '../../domain/channels/delete.ts';
import type { Handler } from '../types.ts';

export const deleteChannel: Handler<'deleteChannel'> = ({ path }, { db }) => removeChannel(db, path);
