import { expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import { SQLITE_OMITTED_EXTENSIONS } from '../../scripts/sqlite.ts';

// The SQLite that loads is the one `prepare` compiled (scripts/sqlite.ts): without the extensions it
// leaves out, and with every option of better-sqlite3's own build that the service relies on.
test('the loaded SQLite is built without the unused extensions and with better-sqlite3 options', () => {
  const db = new Database(':memory:');
  try {
    const options = (db.pragma('compile_options') as { compile_options: string }[]).map(
      (row) => row.compile_options,
    );
    for (const name of SQLITE_OMITTED_EXTENSIONS) expect(options).not.toContain(`ENABLE_${name}`);
    for (const kept of [
      'DEFAULT_FOREIGN_KEYS',
      'DQS=0',
      'THREADSAFE=2',
      'ENABLE_STAT4',
      'ENABLE_MATH_FUNCTIONS',
    ]) {
      expect(options).toContain(kept);
    }
    // What the service uses still works: JSON functions (STL SQL views), math, LIKE.
    expect(db.prepare("SELECT json_extract('{\"a\":[1,2]}', '$.a[1]') AS v, sqrt(16) AS r").get()).toEqual({
      v: 2,
      r: 4,
    });
    expect(() => db.exec('CREATE VIRTUAL TABLE t USING fts5(x)')).toThrow('no such module: fts5');
  } finally {
    db.close();
  }
});
