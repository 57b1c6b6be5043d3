import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import { keepingStatements } from '../../src/db/keptStatements.ts';
import { createTestDatabase, testServerUrl } from '../support/database.ts';

/*
 * Prisma's SQLite adapter prepares a statement per query; its view of the connection keeps them
 * (src/db/keptStatements.ts). What must hold: a text is prepared once, the arguments of each run
 * are that run's own, writes and readers answer as a fresh statement does, and the bound is kept.
 */

let connection: Database.Database;
let prepared: string[];

beforeEach(() => {
  connection = new Database(':memory:');
  connection.exec('CREATE TABLE "T" ("id" INTEGER PRIMARY KEY, "name" TEXT NOT NULL)');
  prepared = [];
  const prepare = connection.prepare.bind(connection);
  connection.prepare = ((source: string) => {
    prepared.push(source);
    return prepare(source);
  }) as typeof connection.prepare;
});
afterEach(() => {
  connection.close();
});

/** A run as Prisma's adapter makes it: prepare, bind, then run or read the raw rows. */
function adapterRun(view: ReturnType<typeof keepingStatements>, source: string, args: unknown[]) {
  const statement = (view.prepare(source) as unknown as { bind(args: unknown[]): AdapterBound }).bind(args);
  return statement.reader ? statement.raw().all() : statement.run();
}
interface AdapterBound {
  reader: boolean;
  run(): { changes: number };
  raw(): { all(): unknown[][] };
}

describe('the adapter’s kept statements', () => {
  test('a text is prepared once; each run binds its own arguments', () => {
    const view = keepingStatements(connection);
    const insert = 'INSERT INTO "T" ("id", "name") VALUES (?, ?)';
    const select = 'SELECT "id", "name" FROM "T" WHERE "id" >= ? ORDER BY "id"';
    for (const [id, name] of [
      [1, 'one'],
      [2, 'two'],
      [3, 'three'],
    ] as const)
      expect(adapterRun(view, insert, [id, name])).toMatchObject({ changes: 1 });
    expect(adapterRun(view, select, [2])).toEqual([
      [2, 'two'],
      [3, 'three'],
    ]);
    expect(adapterRun(view, select, [3])).toEqual([[3, 'three']]);
    expect(adapterRun(view, select, [4])).toEqual([]);
    expect(prepared.filter((source) => source === insert)).toHaveLength(1);
    expect(prepared.filter((source) => source === select)).toHaveLength(1);
  });

  test('a failing run leaves the statement usable, and a bad text fails at once', () => {
    const view = keepingStatements(connection);
    const insert = 'INSERT INTO "T" ("id", "name") VALUES (?, ?)';
    adapterRun(view, insert, [1, 'one']);
    expect(() => adapterRun(view, insert, [1, 'again'])).toThrow(/UNIQUE/);
    expect(adapterRun(view, insert, [2, 'two'])).toMatchObject({ changes: 1 });
    expect(() => view.prepare('SELECT FROM nowhere')).toThrow();
  });

  test('statements without arguments (BEGIN, COMMIT) run through the view', () => {
    const view = keepingStatements(connection);
    view.prepare('BEGIN').run();
    adapterRun(view, 'INSERT INTO "T" ("id", "name") VALUES (?, ?)', [1, 'one']);
    view.prepare('ROLLBACK').run();
    expect(connection.prepare('SELECT COUNT(*) AS "n" FROM "T"').get()).toEqual({ n: 0 });
  });

  test('at most `bound` texts are kept: the least recently used is let go', () => {
    const view = keepingStatements(connection, 2);
    const texts = [1, 2, 3].map((n) => `SELECT ${n} AS "n"`);
    adapterRun(view, texts[0]!, []);
    adapterRun(view, texts[1]!, []);
    adapterRun(view, texts[0]!, []); // 0 is now the most recently used: 1 goes when 2 comes
    adapterRun(view, texts[2]!, []);
    adapterRun(view, texts[0]!, []);
    expect(prepared).toEqual([texts[0], texts[1], texts[2]]);
    expect(adapterRun(view, texts[1]!, [])).toEqual([[2]]);
    expect(prepared).toEqual([texts[0], texts[1], texts[2], texts[1]]);
  });
});

// Through Prisma's client, as the service makes it: the same query again prepares nothing.
(testServerUrl() === undefined ? test : test.skip)(
  'the service’s client prepares a query’s text once',
  async () => {
    const database = await createTestDatabase();
    try {
      const { db } = database.handle;
      const counted: string[] = [];
      const original = Database.prototype.prepare;
      Database.prototype.prepare = function (this: Database.Database, source: string) {
        counted.push(source);
        return original.call(this, source);
      } as typeof original;
      try {
        for (let id = 1; id <= 5; id++) await db.site.findUnique({ where: { id } });
      } finally {
        Database.prototype.prepare = original;
      }
      // Prisma names tables with backticks on SQLite.
      expect(counted.filter((source) => source.includes('`Site`'))).toHaveLength(1);
    } finally {
      await database.drop();
    }
  },
);
