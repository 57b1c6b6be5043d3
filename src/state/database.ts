import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { describeError } from '../errorSummary.ts';
import type { CounterState, SharedState, SignalListener, Unsubscribe } from './port.ts';

/*
 * The shared state in the database, for deployments without Redis: every node that uses the same
 * database shares it, whether one process on SQLite or several nodes on PostgreSQL. Counters and
 * marks are each one SQL statement (INSERT … ON CONFLICT … RETURNING, the same text on SQLite and
 * PostgreSQL), so concurrent requests on any node never lose a count or set a mark twice. Times
 * come from the node's clock, as everywhere else in the service (nodes are expected to keep NTP
 * time; a window is a minute, so milliseconds of skew do not matter).
 *
 * Signals are rows of SharedSignal, which subscribed nodes poll (once a second by default): a
 * message reaches every node within about a second. A node polls only while something on it is
 * subscribed. Rows are read by creation time over a short look-back, not by id alone, because
 * PostgreSQL may commit ids out of order; ids already delivered are remembered, so none is
 * delivered twice.
 *
 * Stored values are rows of SharedValue: set-if-absent is the same kind of upsert as a mark, and
 * compare-and-set an UPDATE conditional on the value read, so concurrent writers never both win.
 *
 * Expired counters, marks, values and old signals are deleted at most once a minute, after a write.
 */

export const SIGNAL_POLL_INTERVAL_MS = 1000;
/** How far back each poll looks; a signal whose insert took longer than this to commit is lost. */
const SIGNAL_LOOKBACK_MS = 10_000;
const PURGE_INTERVAL_MS = 60_000;

export interface DatabaseSharedStateOptions {
  /** How often subscribed nodes look for new signals. */
  pollIntervalMs?: number;
  /** Where failures of background work (polling, purging) are reported. */
  logger: Logger;
}

interface CounterRow {
  count: number;
  resetAt: Date;
}

export class DatabaseSharedState implements SharedState {
  readonly kind = 'database';
  private readonly listeners = new Map<string, Set<SignalListener>>();
  private readonly delivered = new Map<number, number>();
  private readonly pollIntervalMs: number;
  private readonly logger: Logger;
  private poller: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private pollFailing = false;
  private lastPurge = 0;
  private purging: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly db: Db,
    options: DatabaseSharedStateOptions,
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? SIGNAL_POLL_INTERVAL_MS;
    this.logger = options.logger;
  }

  async increment(key: string, windowMs: number): Promise<CounterState> {
    const now = new Date();
    const resetAt = new Date(now.getTime() + windowMs);
    // A window that has ended starts again at 1; the row lock makes concurrent increments queue.
    const rows = await this.db.$queryRaw<CounterRow[]>`
      INSERT INTO "SharedCounter" ("key", "count", "resetAt") VALUES (${key}, 1, ${resetAt})
      ON CONFLICT ("key") DO UPDATE SET
        "count" = CASE WHEN "SharedCounter"."resetAt" <= ${now} THEN 1
                       ELSE "SharedCounter"."count" + 1 END,
        "resetAt" = CASE WHEN "SharedCounter"."resetAt" <= ${now} THEN excluded."resetAt"
                         ELSE "SharedCounter"."resetAt" END
      RETURNING "count", "resetAt"`;
    this.purgeNow();
    const row = rows[0];
    if (row === undefined) throw new Error('The counter upsert returned no row');
    return { count: Number(row.count), resetAt: new Date(row.resetAt) };
  }

  async get(key: string): Promise<CounterState | undefined> {
    const row = await this.db.sharedCounter.findUnique({ where: { key } });
    if (row === null || row.resetAt.getTime() <= Date.now()) return undefined;
    return { count: row.count, resetAt: row.resetAt };
  }

  async decrement(key: string): Promise<void> {
    await this.db.sharedCounter.updateMany({
      where: { key, count: { gt: 0 }, resetAt: { gt: new Date() } },
      data: { count: { decrement: 1 } },
    });
  }

  async reset(key: string): Promise<void> {
    await this.db.sharedCounter.deleteMany({ where: { key } });
  }

  async mark(key: string, ttlMs: number): Promise<boolean> {
    const now = new Date();
    const expiresAt = new Date(now.getTime() + ttlMs);
    // Inserted, or an expired mark replaced: one row comes back. A live mark: none.
    const rows = await this.db.$queryRaw<{ key: string }[]>`
      INSERT INTO "SharedMark" ("key", "expiresAt") VALUES (${key}, ${expiresAt})
      ON CONFLICT ("key") DO UPDATE SET "expiresAt" = excluded."expiresAt"
        WHERE "SharedMark"."expiresAt" <= ${now}
      RETURNING "key"`;
    this.purgeNow();
    return rows.length === 1;
  }

  async putValue(key: string, value: string, ttlMs: number): Promise<boolean> {
    const now = new Date();
    const expiresAt = new Date(now.getTime() + ttlMs);
    // Inserted, or an expired value replaced: one row comes back. A live value: none.
    const rows = await this.db.$queryRaw<{ key: string }[]>`
      INSERT INTO "SharedValue" ("key", "value", "expiresAt") VALUES (${key}, ${value}, ${expiresAt})
      ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value", "expiresAt" = excluded."expiresAt"
        WHERE "SharedValue"."expiresAt" <= ${now}
      RETURNING "key"`;
    this.purgeNow();
    return rows.length === 1;
  }

  async getValue(key: string): Promise<string | undefined> {
    const row = await this.db.sharedValue.findUnique({ where: { key } });
    if (row === null || row.expiresAt.getTime() <= Date.now()) return undefined;
    return row.value;
  }

  async replaceValue(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    const now = new Date();
    const { count } = await this.db.sharedValue.updateMany({
      where: { key, value: expected, expiresAt: { gt: now } },
      data: { value, expiresAt: new Date(now.getTime() + ttlMs) },
    });
    return count === 1;
  }

  async deleteValue(key: string, expected: string): Promise<boolean> {
    const { count } = await this.db.sharedValue.deleteMany({ where: { key, value: expected } });
    return count === 1;
  }

  async broadcast(channel: string, message: string): Promise<void> {
    await this.db.sharedSignal.create({ data: { channel, message } });
    this.purgeNow();
  }

  async subscribe(channel: string, listener: SignalListener): Promise<Unsubscribe> {
    if (this.poller === undefined) await this.startPolling();
    let listeners = this.listeners.get(channel);
    if (listeners === undefined) {
      listeners = new Set();
      this.listeners.set(channel, listeners);
    }
    listeners.add(listener);
    return async () => {
      const current = this.listeners.get(channel);
      if (current === undefined || !current.delete(listener) || current.size > 0) return;
      this.listeners.delete(channel);
      if (this.listeners.size === 0) await this.stopPolling();
    };
  }

  /** Signals already in the table are history: only later ones are delivered. */
  private async startPolling(): Promise<void> {
    for (const { id, createdAt } of await this.recentSignals()) this.delivered.set(id, createdAt.getTime());
    if (this.poller !== undefined || this.closed) return;
    this.poller = setInterval(() => {
      this.polling ??= this.poll().finally(() => {
        this.polling = undefined;
      });
    }, this.pollIntervalMs);
    this.poller.unref();
  }

  private async stopPolling(): Promise<void> {
    clearInterval(this.poller);
    this.poller = undefined;
    await this.polling;
    this.delivered.clear();
  }

  private recentSignals() {
    return this.db.sharedSignal.findMany({
      where: { createdAt: { gte: new Date(Date.now() - SIGNAL_LOOKBACK_MS) } },
      orderBy: { id: 'asc' },
    });
  }

  private async poll(): Promise<void> {
    try {
      const signals = await this.recentSignals();
      if (this.pollFailing) this.logger.info('shared-state signals: the database answers again');
      this.pollFailing = false;
      for (const signal of signals) {
        if (this.delivered.has(signal.id)) continue;
        this.delivered.set(signal.id, signal.createdAt.getTime());
        for (const listener of this.listeners.get(signal.channel) ?? []) listener(signal.message);
      }
      const horizon = Date.now() - 2 * SIGNAL_LOOKBACK_MS;
      for (const [id, createdAt] of this.delivered) if (createdAt < horizon) this.delivered.delete(id);
    } catch (error) {
      // Logged once per outage, not once a second.
      if (!this.pollFailing) {
        this.logger.warn({ err: describeError(error) }, 'shared-state signals: the database does not answer');
      }
      this.pollFailing = true;
    }
  }

  /** Deletes what has expired, at most once per interval, without holding up the caller. */
  private purgeNow(): void {
    const now = Date.now();
    if (this.purging !== undefined || now - this.lastPurge < PURGE_INTERVAL_MS) return;
    this.lastPurge = now;
    this.purging = this.purge(new Date(now)).finally(() => {
      this.purging = undefined;
    });
  }

  private async purge(now: Date): Promise<void> {
    try {
      await this.db.sharedCounter.deleteMany({ where: { resetAt: { lte: now } } });
      await this.db.sharedMark.deleteMany({ where: { expiresAt: { lte: now } } });
      await this.db.sharedValue.deleteMany({ where: { expiresAt: { lte: now } } });
      await this.db.sharedSignal.deleteMany({
        where: { createdAt: { lt: new Date(now.getTime() - 6 * SIGNAL_LOOKBACK_MS) } },
      });
    } catch (error) {
      this.logger.warn({ err: describeError(error) }, 'shared state: purging expired rows failed');
    }
  }

  async ping(): Promise<void> {
    await this.db.$queryRaw`SELECT 1`;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await this.stopPolling();
    await this.purging;
  }
}
