import { recordAlone } from '../../domain/events/record.ts';
import type { Handler } from '../types.ts';

/**
 * Hands the rolling restart to the supervisor and answers at once: the roll (a fresh worker ready
 * before each old one stops accepting) goes on after this response, which an old worker still
 * sends, since it finishes its requests in flight.
 */
export const restartSystem: Handler<'restartSystem'> = async (_input, { restart, log, db, actor }) => {
  const accepted = await restart();
  if (accepted) await recordAlone(db, { type: 'system.restarted', actor });
  log.info(
    { accepted },
    accepted ? 'restart requested' : 'restart requested, but no supervisor runs this process',
  );
  return { value: accepted };
};
