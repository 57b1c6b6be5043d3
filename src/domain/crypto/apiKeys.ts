import { createHash, randomBytes } from 'node:crypto';

/** Prefix that makes a leaked key recognisable to secret scanners. */
const KEY_PREFIX = 'cms_';

/** True for text shaped like one of this service's API keys. */
export const looksLikeApiKey = (text: string): boolean => text.startsWith(KEY_PREFIX);

/** A new API key: 256 random bits, URL-safe. Shown once; only its digest is stored. */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Lower-case hex SHA-256 of a key: what the database keeps and looks keys up by. */
export function digestApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
