import type { Db } from '../../db/client.ts';
import { digestApiKey, generateApiKey } from '../crypto/apiKeys.ts';
import type { Scope } from '../principal.ts';

export interface IssuedApiKey {
  id: number;
  /** The key itself: shown to the operator once, never stored. */
  key: string;
}

/** Creates a new random API key; the database keeps only its digest. */
export async function issueApiKey(
  db: Db,
  options: { title: string; scopes: readonly Scope[]; expiresAt?: Date | undefined },
): Promise<IssuedApiKey> {
  const key = generateApiKey();
  const row = await db.apiKey.create({
    data: {
      title: options.title,
      digest: digestApiKey(key),
      scopes: [...new Set(options.scopes)].join(','),
      expiresAt: options.expiresAt ?? null,
    },
    select: { id: true },
  });
  return { id: row.id, key };
}
