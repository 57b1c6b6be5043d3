import type { Db } from '../../db/client.ts';
import { writeTransaction } from '../../db/transaction.ts';
import { digestApiKey, generateApiKey } from '../crypto/apiKeys.ts';
import type { Actor } from '../events/actor.ts';
import { recordEvent } from '../events/record.ts';
import type { Scope } from '../principal.ts';
import { joinScopes } from './scopes.ts';

export interface IssuedApiKey {
  id: number;
  /** The key itself: shown to the operator once, never stored. */
  key: string;
}

export interface ApiKeySettings {
  title: string;
  scopes: readonly Scope[];
  expiresAt?: Date | null | undefined;
  /** Requests a minute; null or absent for unlimited. */
  rateLimitPerMinute?: number | null | undefined;
}

/** Creates a new random API key; the database keeps only its digest. */
export async function issueApiKey(db: Db, settings: ApiKeySettings, actor: Actor): Promise<IssuedApiKey> {
  const key = generateApiKey();
  const data = {
    title: settings.title,
    scopes: joinScopes(settings.scopes),
    expiresAt: settings.expiresAt ?? null,
    rateLimitPerMinute: settings.rateLimitPerMinute ?? null,
  };
  const row = await writeTransaction(db, async (tx) => {
    const created = await tx.apiKey.create({
      data: { ...data, digest: digestApiKey(key) },
      select: { id: true },
    });
    await recordEvent(tx, { type: 'apiKey.created', resourceId: created.id, payload: data, actor });
    return created;
  });
  return { id: row.id, key };
}
