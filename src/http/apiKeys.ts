import type { Logger } from 'pino';
import type { Db, DbHandle } from '../db/client.ts';
import { parseScopes } from '../domain/apiKeys/scopes.ts';
import { unauthenticated } from '../domain/errors.ts';
import type { Principal } from '../domain/principal.ts';
import type { BackgroundTasks } from './background.ts';
import { describeError } from './logging.ts';

/** lastUsedAt is informational; writing it on every request would turn each read into a write. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** A key that authenticated: its principal and its own rate limit (null: unlimited). */
export interface AuthenticatedKey {
  principal: Extract<Principal, { kind: 'apiKey' }>;
  rateLimitPerMinute: number | null;
  /** When the key expires (ms since epoch), or null. */
  expiresAt: number | null;
}

/** Looks API keys up by digest and records their use. One per app. */
export class ApiKeyAuthenticator {
  /** When this process last wrote each key's lastUsedAt, so a burst of requests writes once. */
  private readonly lastWritten = new Map<number, number>();

  constructor(
    private readonly db: Db,
    /** The client's point reads: every request with a key reads it through a kept statement. */
    private readonly reads: DbHandle['reads'],
    private readonly background: BackgroundTasks,
    private readonly log: Logger,
  ) {}

  /**
   * The principal and rate limit of the key whose SHA-256 digest this is (the caller has it already:
   * it is the credentials' fingerprint, src/http/auth.ts), or a thrown `unauthenticated` DomainError.
   *
   * "Compared in constant time": the lookup by SHA-256 digest is the comparison. The secret is 256
   * random bits and only its digest reaches the database; whatever the index lookup's timing
   * reveals is how a digest of the caller's own guess compares with stored digests, which (SHA-256
   * being preimage resistant) brings no guess closer to a key. A timingSafeEqual after the lookup
   * would compare a digest with itself and protect nothing, so there is none.
   */
  async authenticate(digest: string, now = new Date()): Promise<AuthenticatedKey> {
    const row = await this.reads.apiKeyByDigest(digest);
    if (row === null) throw unauthenticated('The API key is not valid');
    if (row.revokedAt !== null) throw unauthenticated('The API key has been revoked');
    if (row.expiresAt !== null && row.expiresAt.getTime() <= now.getTime()) {
      throw unauthenticated('The API key has expired');
    }
    this.recordUse(row.id, row.lastUsedAt, now);
    return {
      principal: { kind: 'apiKey', apiKeyId: row.id, scopes: parseScopes(row.scopes) },
      rateLimitPerMinute: row.rateLimitPerMinute,
      expiresAt: row.expiresAt?.getTime() ?? null,
    };
  }

  private recordUse(id: number, lastUsedAt: Date | null, now: Date): void {
    const previous = Math.max(lastUsedAt?.getTime() ?? 0, this.lastWritten.get(id) ?? 0);
    if (now.getTime() - previous < LAST_USED_RESOLUTION_MS) return;
    this.lastWritten.set(id, now.getTime());
    const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
    this.background.run(
      // The condition makes the write idempotent across nodes: only the first within a minute lands.
      () =>
        this.db.apiKey.updateMany({
          where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: staleBefore } }] },
          data: { lastUsedAt: now },
        }),
      (error) => this.log.warn({ err: describeError(error), apiKeyId: id }, 'could not record API key use'),
    );
  }
}
