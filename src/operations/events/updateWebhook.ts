import { OutboundPolicy } from '../../domain/events/outbound.ts';
import { updateWebhook as change } from '../../domain/events/subscriptions.ts';
import { parseIfMatch } from '../../domain/versions.ts';
import type { Handler } from '../types.ts';
import { withETag } from '../versioned.ts';

export const updateWebhook: Handler<'updateWebhook'> = async (
  { path, body, header },
  { db, config, reply },
) => {
  const { record, version } = await change(
    db,
    path.id,
    body,
    new OutboundPolicy(config.events.allowedAddresses),
    parseIfMatch(header['If-Match']),
  );
  return reply(withETag(record, version));
};
