import { identifier, type Sql, sql } from './sql.ts';
import { SQLITE_LIKE_FUNCTION, SQLITE_TIME_LIMIT_FUNCTION } from './sqliteTimeLimit.ts';

/*
 * The SQL of SQLite's time limit (src/db/sqliteTimeLimit.ts): the conditions a costly content query
 * carries.
 */

/** The condition that puts a query issued at `issuedAt` under the limit (put it first in the WHERE). */
export function timeLimitCondition(issuedAt: number): Sql {
  return sql`${identifier(SQLITE_TIME_LIMIT_FUNCTION)}(${issuedAt}) = 1`;
}

/**
 * SQLite's own LIKE costs up to (text bytes) × (pattern length + a constant) steps in one call; a
 * call is left to it while that product stays under this work, short enough (about a millisecond)
 * for the per-row check to bound a statement. It is several times cheaper per call than a
 * JavaScript function, so the usual short patterns on ordinary texts keep it.
 */
const NATIVE_LIKE_WORK = 1 << 18;
const NATIVE_LIKE_STEP_OVERHEAD = 16;

/** The longest text (in bytes) SQLite's own LIKE may test against `pattern`. */
export function nativeLikeMaxBytes(pattern: string): number {
  return Math.floor(NATIVE_LIKE_WORK / (pattern.length + NATIVE_LIKE_STEP_OVERHEAD));
}

/**
 * `subject LIKE pattern ESCAPE '\\'` (0, 1 or NULL, as LIKE) under the time limit of a query issued
 * at `issuedAt`: SQLite's own LIKE can spend seconds inside one call on one long text, where the
 * per-row check above never gets to run, so a text too long for the pattern goes to the matcher of
 * src/db/likePatterns.ts, which reads the clock as it works. octet_length reads a text's size
 * without reading the text.
 */
export function likeCondition(subject: Sql, pattern: string, issuedAt: number): Sql {
  return sql`(CASE WHEN octet_length(${subject}) <= ${nativeLikeMaxBytes(pattern)} THEN ${subject} LIKE ${pattern} ESCAPE '\\' ELSE ${identifier(SQLITE_LIKE_FUNCTION)}(${subject}, ${pattern}, ${issuedAt}) END)`;
}
