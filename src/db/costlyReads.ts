import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type pg from 'pg';
import { type Sql, sqliteBindable } from './sql.ts';

/*
 * Reads whose cost depends on the data — the content filters of the list and of stl/contents
 * (counts, page marks, the ids of a page) — run, on SQLite, in a thread of their own
 * (costlyReadsThread.ts). better-sqlite3 runs a statement on the calling thread; on the worker's
 * event loop even a statement its time limit ends (src/db/sqliteTimeLimit.ts) would hold every
 * other request — ping, a get-by-id — until then. In the thread it holds only the content filters
 * queued behind it, and the time limit, counted from when the request compiled its filter, bounds
 * their wait too. On PostgreSQL they are ordinary queries, a few at a time. Either way they belong
 * to the database handle createDb makes (DbHandle.costly), and end with its client.
 */

/** Where a database handle runs its costly reads. */
export interface CostlyReads {
  all<T>(statement: Sql): Promise<T[]>;
  /**
   * Runs a read that matches text patterns — from its filter to the last piece of its rows' long
   * texts — in the database's turn for such reads; see PooledCostlyReads.matchingTexts.
   */
  matchingTexts<T>(work: () => Promise<T>): Promise<T>;
}

export interface CostlyReadsSetup {
  file: string;
  limitMs: number;
  /** The page cache of the thread's connection, in KiB, as the client's (unset: the build default). */
  cacheKib?: number | undefined;
}

export interface CostlyReadRequest {
  id: number;
  sql: string;
  params: unknown[];
}

export type CostlyReadReply =
  | { id: number; rows: Record<string, unknown>[] }
  | { id: number; error: { code: string; message: string } };

/** A failure of the thread's statement, with SQLite's (or the time limit's) code for the HTTP layer. */
class CostlyReadError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The thread ended (or never started): answered like any unreachable database (503). */
class CostlyReadsUnavailable extends Error {
  readonly kind = 'ConnectionClosed';
}

/**
 * The thread runs the way the service itself runs: compiled JavaScript under dist/, or TypeScript
 * through tsx (a worker thread's entry is not loaded through `--import tsx`, so a two-line
 * JavaScript entry registers tsx and then imports the thread's file).
 */
const COMPILED = import.meta.url.endsWith('.js');
const THREAD_URL = new URL(COMPILED ? './costlyReadsThread.js' : './costlyReadsThread.ts', import.meta.url);
const THREAD: string | URL = COMPILED
  ? THREAD_URL
  : new URL(
      `data:text/javascript,${encodeURIComponent(
        `const { register } = await import(${JSON.stringify(
          // The package's ESM entry of `tsx/esm/api` (its exports map); resolve() would give the CommonJS one.
          pathToFileURL(
            join(
              dirname(createRequire(import.meta.url).resolve('tsx/package.json')),
              'dist/esm/api/index.mjs',
            ),
          ).href,
        )}); register(); await import(${JSON.stringify(THREAD_URL.href)});`,
      )}`,
    );

export class SqliteCostlyReads implements CostlyReads {
  private worker: Worker | undefined;
  private readonly pending = new Map<
    number,
    { resolve: (rows: Record<string, unknown>[]) => void; reject: (error: Error) => void }
  >();
  private nextId = 1;

  /** `onQuery` is told each statement and its time, queue included, as createDb's option is. */
  constructor(
    private readonly setup: CostlyReadsSetup,
    private readonly onQuery?: (sqlText: string, durationMs: number) => void,
  ) {}

  /** SQLite: the thread already runs the filters one at a time, and the time limit ends each. */
  matchingTexts<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  all<T>(statement: Sql): Promise<T[]> {
    const worker = this.start();
    const id = this.nextId++;
    const started = performance.now();
    const observed = () => this.onQuery?.(statement.sql, performance.now() - started);
    return new Promise<T[]>((resolve, reject) => {
      this.pending.set(id, {
        resolve: (rows) => {
          observed();
          resolve(rows as T[]);
        },
        reject: (error) => {
          observed();
          reject(error);
        },
      });
      // Only while a read is pending does the thread keep the process alive.
      worker.ref();
      const request: CostlyReadRequest = {
        id,
        sql: statement.sql,
        params: statement.values.map(sqliteBindable),
      };
      worker.postMessage(request);
    });
  }

  private start(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(THREAD, { workerData: this.setup });
    worker.unref();
    worker.on('message', (reply: CostlyReadReply) => {
      const waiting = this.pending.get(reply.id);
      if (waiting === undefined) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if ('rows' in reply) waiting.resolve(reply.rows);
      else waiting.reject(new CostlyReadError(reply.error.code, reply.error.message));
    });
    const ended = () => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiting of this.pending.values())
        waiting.reject(new CostlyReadsUnavailable('The SQLite read thread ended'));
      this.pending.clear();
    };
    // A thread that fails to open the database, or dies, fails what waits on it; the next read starts another.
    worker.on('error', ended);
    worker.on('exit', ended);
    this.worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) await worker.terminate();
  }
}

/**
 * PostgreSQL: at most this many costly reads of one client hold pool connections at once (pg's pool
 * has 10), so that point reads, writes and the cheap queries of every request always find a
 * connection, however many costly filters arrive; the others wait their turn in the process, each
 * holder being bounded by statement_timeout.
 */
export const COSTLY_READS_AT_ONCE = 8;

/**
 * PostgreSQL: a read that matches text patterns (Like/NotLike) costs what the stored texts make
 * it cost — a filter of long patterns over texts of megabytes, then those texts read, took about a
 * second of one of the database machine's cores per answer — and several at once took every core,
 * so that ping and a get-by-id waited for the machine, while answering no more of them a second
 * than one at a time did (bench/HOSTILE.md, "Text matching takes turns"). So such reads take turns:
 * one at a time per database, whichever worker or node sends it (an advisory lock, held for the
 * read's transaction), and one at a time per process before that, so that a process's waiters hold
 * no more than one pool connection. A read that cannot start within TEXT_MATCHING_WAIT_MS is
 * answered as a statement at its time limit: 503 with Retry-After.
 */
export const TEXT_MATCHING_WAIT_MS = 2000;

/** The advisory lock of the turn (a fixed number: every process of the service takes the same). */
export const TEXT_MATCHING_LOCK = 4_285_730_911;

/** PostgreSQL's query_canceled: the HTTP layer answers it as a statement at its time limit. */
const QUERY_CANCELED = '57014';
/** PostgreSQL's lock_not_available: lock_timeout passed while waiting for the turn. */
const LOCK_NOT_AVAILABLE = '55P03';

/** A read that waited past TEXT_MATCHING_WAIT_MS for its turn; answered like a statement_timeout. */
class TextMatchingBusy extends Error {
  readonly code = QUERY_CANCELED;
  constructor() {
    super('Other reads that match text patterns held the turn past the time limit');
  }
}

class Turns {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly atOnce: number) {}

  /** Runs work in a turn; with waitMs, refuses (TextMatchingBusy) when the turn does not come in time. */
  async run<T>(work: () => Promise<T>, waitMs?: number): Promise<T> {
    if (this.running >= this.atOnce) await this.turn(waitMs);
    else this.running++;
    try {
      return await work();
    } finally {
      // The turn passes straight to the next waiter, if any.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  private turn(waitMs: number | undefined): Promise<void> {
    return new Promise<void>((go, refuse) => {
      const waiter = () => {
        clearTimeout(timer);
        go();
      };
      const timer =
        waitMs === undefined
          ? undefined
          : setTimeout(() => {
              this.waiting.splice(this.waiting.indexOf(waiter), 1);
              refuse(new TextMatchingBusy());
            }, waitMs);
      this.waiting.push(waiter);
    });
  }
}

/**
 * PostgreSQL's costly reads: ordinary queries on the client's pool, at most COSTLY_READS_AT_ONCE at
 * a time, sent through the driver as the point reads' `rows` are (not through Prisma's client,
 * whose raw queries cost a page's pick more than its statement did: bench/README.md).
 */
export class PooledCostlyReads implements CostlyReads {
  private readonly turns = new Turns(COSTLY_READS_AT_ONCE);
  private readonly textTurns = new Turns(1);

  constructor(
    private readonly rows: <T>(statement: Sql) => Promise<T[]>,
    private readonly pool: () => Promise<pg.Pool>,
  ) {}

  all<T>(statement: Sql): Promise<T[]> {
    return this.turns.run(() => this.rows<T>(statement));
  }

  /** The work, in this process's turn and then the database's (see TEXT_MATCHING_WAIT_MS). */
  matchingTexts<T>(work: () => Promise<T>): Promise<T> {
    return this.textTurns.run(async () => {
      const client = await (await this.pool()).connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        await client.query(`SET LOCAL lock_timeout = ${TEXT_MATCHING_WAIT_MS}`);
        try {
          await client.query('SELECT pg_advisory_xact_lock($1)', [TEXT_MATCHING_LOCK]);
        } catch (error) {
          if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) throw new TextMatchingBusy();
          throw error;
        }
        return await work();
      } finally {
        // The transaction only holds the lock: its end, whichever, releases it.
        await client.query('ROLLBACK').catch((error: unknown) => {
          broken = error instanceof Error ? error : new Error(String(error));
        });
        client.release(broken);
      }
    }, TEXT_MATCHING_WAIT_MS);
  }
}
