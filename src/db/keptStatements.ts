import type BetterSqlite3 from 'better-sqlite3';
import { RecentlyUsed } from '../recentlyUsed.ts';

/*
 * Prisma's SQLite adapter prepares every statement it runs, every time (`prepare(sql).bind(args)`),
 * so SQLite compiles the text again on each query — for a write, with the programs of the triggers
 * it fires. The adapter is given a view of its connection instead whose statements are prepared
 * once per text and kept (the most recently used, up to a bound), the arguments bound at each run.
 * Only the adapter's statements are kept here: the point reads and writes keep their own.
 */

/** What Prisma's adapter (and the BEGIN IMMEDIATE swap of src/db/transaction.ts) uses of a connection. */
export type AdapterConnection = Pick<BetterSqlite3.Database, 'prepare' | 'exec' | 'close' | 'pragma'>;

/** Statements kept per connection: the texts of the service's queries, with room for the odd ones. */
export const KEPT_STATEMENTS = 512;

type Statement = BetterSqlite3.Statement<unknown[]>;

/** A kept statement as the adapter uses it: bound to its arguments at each run, never for good. */
function reusable(statement: Statement) {
  return {
    bind: (args: unknown[]) => ({
      reader: statement.reader,
      columns: () => statement.columns(),
      run: () => statement.run(args),
      // A reader is kept in raw mode (the adapter reads rows only as arrays).
      raw: () => ({ all: () => statement.all(args) }),
    }),
    run: () => statement.run(),
  };
}

/**
 * `make(text)` once per text, the `bound` most recently used kept (the least recently used is let
 * go): for statements prepared once per text, here, in the point reads and in the costly-reads thread.
 */
export function keptByText<T>(make: (text: string) => T, bound: number): (text: string) => T {
  const kept = new RecentlyUsed<string, T>(bound);
  return (text) => {
    let found = kept.get(text);
    if (found === undefined) {
      found = make(text);
      kept.set(text, found);
    }
    return found;
  };
}

export function keepingStatements(
  connection: BetterSqlite3.Database,
  bound = KEPT_STATEMENTS,
): AdapterConnection {
  const prepare = keptByText((source) => {
    const statement = connection.prepare<unknown[]>(source);
    if (statement.reader) statement.raw(true);
    return reusable(statement);
  }, bound);
  return {
    prepare: prepare as unknown as BetterSqlite3.Database['prepare'],
    exec: (source) => connection.exec(source),
    close: () => connection.close(),
    pragma: ((source: string, options?: BetterSqlite3.PragmaOptions) =>
      connection.pragma(source, options)) as BetterSqlite3.Database['pragma'],
  };
}
