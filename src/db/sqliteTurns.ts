import { AsyncLocalStorage } from 'node:async_hooks';
import type {
  SqlDriverAdapter,
  SqlDriverAdapterFactory,
  SqlQuery,
  Transaction,
} from '@prisma/driver-adapter-utils';

/*
 * A SQLite client has one connection, and SQLite's transaction belongs to the connection, not to a
 * caller. Prisma's better-sqlite3 adapter makes transactions take turns on it (a mutex held from
 * BEGIN to COMMIT or ROLLBACK), but a plain statement took no turn: issued by another request while
 * an interactive transaction was open and awaiting, it ran inside that transaction, reading its
 * uncommitted writes, and its own write was undone when the transaction rolled back, after the
 * request had been answered. So here every statement on the connection takes the same turns: a
 * plain statement (a Prisma query outside a transaction, a point read of src/db/pointReads.ts)
 * waits, in order of arrival with the transactions, until no transaction is open. A transaction's
 * own statements go through its transaction object and never wait. The costly reads' thread
 * (src/db/costlyReads.ts) and the SQL sandbox have connections of their own, which see only what was
 * committed, so they take no turns. On PostgreSQL none of this is needed: a transaction holds a
 * connection of the pool, and other statements take others.
 *
 * Code inside a transaction's work must use the transaction (`tx`), never the client: a statement on
 * the client would wait for the very transaction that awaits it. That is refused at once, with an
 * error that names the mistake, instead of hanging until the transaction's timeout.
 */

/** The work of an interactive transaction, while it runs: statements on its client are refused. */
interface OpenWork {
  turns: ConnectionTurns;
  running: boolean;
}

const openWork = new AsyncLocalStorage<OpenWork>();

export const STATEMENT_INSIDE_TRANSACTION =
  'A statement on the SQLite client ran inside an open transaction of the same client: it would wait for that transaction forever. Use the transaction (tx) inside its work.';

/**
 * A write transaction's attempt while it holds the connection's turn (src/db/transaction.ts):
 * `refused` is SQLite's answer when its immediate BEGIN found the write lock taken.
 */
export interface WriteAttempt {
  refused?: unknown;
}

/**
 * The isolation level writeTransaction asks for on SQLite (SQLite's only one, which Prisma hands to
 * the adapter's startTransaction): the sign that the transaction writes, and begins IMMEDIATE.
 */
export const WRITE_ISOLATION_LEVEL = 'SERIALIZABLE';

/** Whose turn it is on one connection: the open transaction's, then each waiter's in order. */
export class ConnectionTurns {
  #taken = false;
  readonly #queue: (() => void)[] = [];
  /**
   * The write attempt of the transaction holding the turn, if it writes: while it holds the turn no
   * other statement runs on the connection, so every statement prepared meanwhile is its own.
   */
  writing: WriteAttempt | undefined;

  /** Statements and transactions waiting for their turn (tests order a request after a transaction with it). */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Runs a plain statement when no transaction is open. better-sqlite3 runs a statement to its end
   * before returning, so a statement that finds the connection free runs at once, without taking the
   * turn (the hot path costs one comparison); one that finds it taken waits for its turn.
   */
  statement<T>(run: () => T): T | Promise<Awaited<T>> {
    const work = openWork.getStore();
    if (work?.running && work.turns === this) throw new Error(STATEMENT_INSIDE_TRANSACTION);
    if (!this.#taken) return run();
    return this.#take().then(async (): Promise<Awaited<T>> => {
      try {
        return await run();
      } finally {
        this.#pass();
      }
    });
  }

  /** Takes the turn for a transaction; the function returned gives it back (once). */
  async transaction(): Promise<() => void> {
    await this.#take();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#pass();
    };
  }

  #take(): Promise<void> {
    if (!this.#taken) {
      this.#taken = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#queue.push(resolve));
  }

  /** Hands the turn to the first waiter, or frees the connection when none waits. */
  #pass(): void {
    const next = this.#queue.shift();
    if (next === undefined) this.#taken = false;
    else next();
  }
}

const clients = new WeakMap<object, ConnectionTurns>();

/** The turns of a SQLite client's connection; undefined for a PostgreSQL client. */
export function connectionTurnsOf(client: object): ConnectionTurns | undefined {
  return clients.get(client);
}

/**
 * The adapter factory, with every statement of its connections taking `turns`: plain statements wait
 * while a transaction is open; a transaction takes the turn from its start to its commit or rollback.
 */
export function takingTurns(
  factory: SqlDriverAdapterFactory,
  turns: ConnectionTurns,
): SqlDriverAdapterFactory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    async connect() {
      const adapter: SqlDriverAdapter = await factory.connect();
      const queryRaw = adapter.queryRaw.bind(adapter);
      const executeRaw = adapter.executeRaw.bind(adapter);
      const executeScript = adapter.executeScript.bind(adapter);
      const startTransaction = adapter.startTransaction.bind(adapter);
      adapter.queryRaw = (query: SqlQuery) => turns.statement(() => queryRaw(query));
      adapter.executeRaw = (query: SqlQuery) => turns.statement(() => executeRaw(query));
      adapter.executeScript = (script: string) => turns.statement(() => executeScript(script));
      adapter.startTransaction = async (isolationLevel) => {
        const taken = await turns.transaction();
        const giveBack = () => {
          turns.writing = undefined;
          taken();
        };
        turns.writing = isolationLevel === WRITE_ISOLATION_LEVEL ? {} : undefined;
        let transaction: Transaction;
        try {
          transaction = await startTransaction(isolationLevel);
        } catch (error) {
          giveBack();
          throw error;
        }
        // Prisma sends COMMIT or ROLLBACK through the transaction, then calls one of these.
        const commit = transaction.commit.bind(transaction);
        const rollback = transaction.rollback.bind(transaction);
        transaction.commit = () => commit().finally(giveBack);
        transaction.rollback = () => rollback().finally(giveBack);
        return transaction;
      };
      return adapter;
    },
  };
}

/** The client's transaction method, as the SQLite client is given it. */
type TransactionMethod = (input: unknown, options?: unknown) => Promise<unknown>;

/**
 * Makes the client's interactive transactions mark their work, so that a statement the work issues
 * on the client (instead of on `tx`) is refused at once. The mark ends with the work: something the
 * work started and left running waits its turn like any other statement. With `refusing` false the
 * client's turns are only recorded (connectionTurnsOf): the mark is an AsyncLocalStorage, whose
 * promise hooks, once on, cost every promise of the process on Node.js 20 and 22.
 */
export function refuseClientInsideTransactions(
  client: object,
  turns: ConnectionTurns,
  refusing = true,
): void {
  clients.set(client, turns);
  if (!refusing) return;
  const holder = client as { $transaction: TransactionMethod };
  const transaction = holder.$transaction.bind(client);
  holder.$transaction = (input, options) => {
    if (typeof input !== 'function') return transaction(input, options);
    const work = input as (tx: unknown) => Promise<unknown>;
    return transaction(async (tx: unknown) => {
      const mark: OpenWork = { turns, running: true };
      try {
        return await openWork.run(mark, () => work(tx));
      } finally {
        mark.running = false;
      }
    }, options);
  };
}
