import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import pg from 'pg';
import { likeTokens, likeToRegex } from '../../src/db/likePatterns.ts';
import { sql } from '../../src/db/sql.ts';
import { likeCondition, nativeLikeMaxBytes } from '../../src/db/sqliteLimitedSql.ts';
import {
  installTimeLimit,
  SQLITE_LIKE_FUNCTION,
  SQLITE_TIME_LIMIT_CODE,
} from '../../src/db/sqliteTimeLimit.ts';
import { rngOf } from '../fuzz/generate.ts';
import { testServerUrl } from '../support/database.ts';

/*
 * The LIKE patterns the content filters run (src/db/likePatterns.ts): SQLite's matcher and
 * PostgreSQL's regular expressions must answer exactly what each database's own LIKE answers, and
 * the SQLite matcher must end a statement at its deadline inside one call on one long text. No
 * durations are asserted: a statement that could only end by the clock must end with the
 * time-limit error.
 */

/** Characters that exercise every rule: case (ASCII and not), wildcards, escapes, surrogate pairs, newlines and regex signs. */
const PATTERN_ALPHABET = [
  'a',
  'A',
  'b',
  '%',
  '_',
  '\\',
  'é',
  'É',
  '😀',
  '.',
  '*',
  '(',
  '[',
  '^',
  '$',
  '?',
  '{',
  '|',
  '+',
  '\n',
];
const TEXT_ALPHABET = ['a', 'A', 'b', 'B', '%', '_', '\\', 'é', 'É', '😀', '.', '*', '(', '[', '$', '\n'];

function randomPairs(seed: number, count: number): [string, string][] {
  const rng = rngOf(seed);
  const word = (alphabet: readonly string[], max: number) =>
    Array.from(
      { length: Math.floor(rng() * (max + 1)) },
      () => alphabet[Math.floor(rng() * alphabet.length)],
    ).join('');
  return Array.from({ length: count }, () => [word(TEXT_ALPHABET, 10), word(PATTERN_ALPHABET, 7)]);
}

describe('SQLite: the matcher answers as SQLite’s LIKE', () => {
  let database: Database.Database;
  beforeAll(() => {
    database = new Database(':memory:');
    installTimeLimit(database, 60_000);
  });
  afterAll(() => {
    database.close();
  });

  test('on 20,000 random texts and patterns, and on texts long enough to leave SQLite’s own LIKE', () => {
    const native = database.prepare("SELECT ? LIKE ? ESCAPE '\\' AS r");
    const ours = database.prepare(`SELECT ${SQLITE_LIKE_FUNCTION}(?, ?, ?) AS r`);
    let matches = 0;
    const disagreements: [string, string][] = [];
    for (const [text, pattern] of randomPairs(15, 20_000)) {
      const expected = (native.get(text, pattern) as { r: number }).r;
      if (expected === 1) matches++;
      if ((ours.get(text, pattern, Date.now()) as { r: number }).r !== expected)
        disagreements.push([text, pattern]);
    }
    expect(disagreements).toEqual([]);
    // The sample holds matches as well as misses.
    expect(matches).toBeGreaterThan(300);

    // The condition the content query runs sends a text longer than the pattern's native bound to
    // the matcher: same answers, NULL kept.
    const long = `${'xY'.repeat(40_000)}tail`;
    database.exec('CREATE TABLE t (body TEXT)');
    database.prepare('INSERT INTO t VALUES (?)').run(long);
    for (const [pattern, expected] of [
      ['%TAIL', 1],
      ['xy%', 1],
      ['%yx_x%', 1],
      ['%tailx', 0],
      ['x_y%', 0],
    ] as const) {
      expect(long.length).toBeGreaterThan(nativeLikeMaxBytes(pattern));
      const { sql: text, values } = likeCondition(sql`"body"`, pattern, Date.now());
      expect(database.prepare(`SELECT ${text} AS r FROM t`).get(...values)).toEqual({ r: expected });
      expect(database.prepare(`SELECT ? LIKE ? ESCAPE '\\' AS r`).get(long, pattern)).toEqual({
        r: expected,
      });
    }
    expect(database.prepare(`SELECT ${SQLITE_LIKE_FUNCTION}(NULL, '%', 0) AS r`).get()).toEqual({ r: null });
  });

  test('a single call on one long text ends at the deadline, whatever the pattern’s shape', () => {
    const limited = new Database(':memory:');
    try {
      installTimeLimit(limited, 100);
      limited.exec('CREATE TABLE t (body TEXT)');
      limited.prepare('INSERT INTO t VALUES (?)').run('a'.repeat(4_000_000));
      const statement = limited.prepare(
        `SELECT count(*) AS c FROM t WHERE ${SQLITE_LIKE_FUNCTION}(body, ?, ?) = 1`,
      );
      // `_` between every literal: every place in the text must be tried along the whole pattern.
      for (const pattern of [`%${'a_'.repeat(499)}b%`, `%_${'a_'.repeat(498)}b%`]) {
        let error: unknown;
        try {
          statement.get(pattern, Date.now());
        } catch (caught) {
          error = caught;
        }
        expect((error as { code?: string }).code).toBe(SQLITE_TIME_LIMIT_CODE);
      }
      // The shapes SQLite's own LIKE is slowest on are linear for the matcher, and answered.
      installTimeLimit(limited, 60_000);
      expect(statement.get(`%${'a'.repeat(999)}b%`, Date.now())).toEqual({ c: 0 });
      expect(statement.get(`%${'a%'.repeat(499)}b`, Date.now())).toEqual({ c: 0 });
      expect(statement.get(`%a${'%_'.repeat(499)}`, Date.now())).toEqual({ c: 1 });
    } finally {
      limited.close();
    }
  });
});

test('a pattern that ends in a lone escape character has no tokens and no regular expression', () => {
  expect(likeTokens('abc\\')).toBeUndefined();
  expect(likeToRegex('abc\\')).toBeUndefined();
  expect(likeTokens('a\\\\')).toEqual([
    { kind: 'literal', character: 'a' },
    { kind: 'literal', character: '\\' },
  ]);
  expect(likeToRegex('%%a_.\\%%%')).toBe('^.*a.\\.%.*$');
});

const server = testServerUrl();
(server === undefined ? describe.skip : describe)(
  'PostgreSQL: the regular expression answers as LIKE',
  () => {
    let client: pg.Client;
    beforeAll(async () => {
      client = new pg.Client({ connectionString: server });
      await client.connect();
    });
    afterAll(() => client.end());

    test('on 20,000 random texts and patterns (both lowered, as the content filter runs them)', async () => {
      const pairs = randomPairs(16, 20_000).filter(([, pattern]) => likeToRegex(pattern) !== undefined);
      const { rows } = await client.query<{ t: string; p: string; expected: boolean; ours: boolean }>(
        `SELECT t, p, lower(t) LIKE lower(p) ESCAPE '\\' AS expected, lower(t) ~ lower(r) AS ours
         FROM unnest($1::text[], $2::text[], $3::text[]) AS x(t, p, r)`,
        [
          pairs.map(([text]) => text),
          pairs.map(([, pattern]) => pattern),
          pairs.map(([, p]) => likeToRegex(p)),
        ],
      );
      expect(rows.length).toBeGreaterThan(15_000);
      expect(rows.filter((row) => row.expected).length).toBeGreaterThan(100);
      expect(rows.filter((row) => row.expected !== row.ours)).toEqual([]);
    });

    test('statement_timeout ends a long pattern’s regular expression on long texts', async () => {
      await client.query('SET statement_timeout = 200');
      try {
        const regex = likeToRegex(`%${'a_'.repeat(499)}b%`);
        // A text per row (a constant one PostgreSQL would match once, while planning).
        const texts = 'SELECT repeat($1::text, 4000000 + i) AS t FROM generate_series(1, 50) AS i';
        await expect(
          client.query(`SELECT count(*) FROM (${texts}) AS x WHERE lower(t) ~ lower($2)`, ['a', regex]),
        ).rejects.toMatchObject({ code: '57014' });
      } finally {
        await client.query('RESET statement_timeout');
      }
    });
  },
);
