import { expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import driver from 'better-sqlite3/driver';
import { SQLITE_OMITTED_EXTENSIONS } from '../../scripts/sqlite.ts';

// The SQLite that loads is the one the running Node.js gets (packages/better-sqlite3): below
// Node-API 10, better-sqlite3 12.x with the SQLite `prepare` compiled (scripts/sqlite.ts), without the
// extensions it leaves out; from Node-API 10 on, 13.x's prebuilt binary, which has them all. Either
// way, with every option of better-sqlite3's own build that the service relies on.
test('the loaded SQLite is the build of the driver this Node.js loads, with better-sqlite3 options', () => {
  expect(driver).toBe(Number(process.versions.napi) >= 10 ? 'better-sqlite3-13' : 'better-sqlite3-12');
  const db = new Database(':memory:');
  try {
    const options = (db.pragma('compile_options') as { compile_options: string }[]).map(
      (row) => row.compile_options,
    );
    for (const name of SQLITE_OMITTED_EXTENSIONS) {
      if (driver === 'better-sqlite3-12') expect(options).not.toContain(`ENABLE_${name}`);
      else expect(options).toContain(`ENABLE_${name}`);
    }
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
    const fts5 = () => db.exec('CREATE VIRTUAL TABLE t USING fts5(x)');
    if (driver === 'better-sqlite3-12') expect(fts5).toThrow('no such module: fts5');
    else expect(fts5).not.toThrow();
  } finally {
    db.close();
  }
});
