/*
 * `LIKE … ESCAPE '\'` patterns, read once: a pattern ending in a lone `\` is refused (PostgreSQL
 * would fail the statement), and the rest is either matched in JavaScript or turned into a regular
 * expression.
 *
 * SQLite: the pattern computed in JavaScript under a deadline. SQLite's own LIKE tests a
 * text position by position against the pattern: on a long text and a long pattern that is text
 * length × pattern length steps inside one call, which no per-row check can stop (and SQLite's
 * progress handler, which better-sqlite3 does not expose anyway, counts virtual-machine steps, of
 * which one LIKE is one). This matcher gives the same answers (ASCII-only case folding, `_` is one
 * Unicode character, `\` escapes the next character, a trailing `\` matches nothing) and looks at
 * the clock as it works, so a statement that uses it ends at its deadline whatever the data.
 *
 * A pattern is split at its `%` into segments of literal runs and `_` counts. The first segment
 * must match at the start, the last at the end, and each one between at its leftmost place after
 * the one before: with fixed-length segments, the leftmost place is never worse than any other.
 * Literal runs are found with String.prototype.indexOf (linear in the text) and verified with
 * startsWith; only segments that begin with `_` are tried at each place, which the deadline bounds.
 *
 * PostgreSQL: its LIKE has the same cost on a long text and a long pattern, and checks for a
 * cancelled statement only between calls, so one call can run many seconds past statement_timeout.
 * Its regular-expression engine is an automaton — linear in the text — that does check: a long
 * pattern is run as the anchored regular expression that means the same.
 */

const ESCAPE = '\\';

/** One element of a pattern: `%`, `_`, or a literal character (a whole code point). */
export type LikeToken = { kind: 'many' } | { kind: 'one' } | { kind: 'literal'; character: string };

/** The pattern's tokens, or undefined when it ends in a lone escape character. */
export function likeTokens(pattern: string): LikeToken[] | undefined {
  const tokens: LikeToken[] = [];
  const characters = Array.from(pattern);
  for (let index = 0; index < characters.length; index++) {
    const character = characters[index] as string;
    if (character === ESCAPE) {
      index++;
      const escaped = characters[index];
      if (escaped === undefined) return undefined;
      tokens.push({ kind: 'literal', character: escaped });
    } else if (character === '%') tokens.push({ kind: 'many' });
    else if (character === '_') tokens.push({ kind: 'one' });
    else tokens.push({ kind: 'literal', character });
  }
  return tokens;
}

/** Characters with a meaning in PostgreSQL's advanced regular expressions; `\` before each makes it literal. */
const REGEX_SPECIAL = /[\\^$.[\]|()*+?{}]/;

/**
 * The anchored regular expression that matches what the pattern matches (`.` is one character,
 * newline included, in PostgreSQL's default mode), or undefined for a pattern that ends in a lone
 * escape character.
 */
export function likeToRegex(pattern: string): string | undefined {
  const tokens = likeTokens(pattern);
  if (tokens === undefined) return undefined;
  const parts = tokens.map((token, index) => {
    // A run of `%` is one `.*`: more would cost the regular-expression compiler for nothing.
    if (token.kind === 'many') return tokens[index - 1]?.kind === 'many' ? '' : '.*';
    if (token.kind === 'one') return '.';
    return REGEX_SPECIAL.test(token.character) ? `\\${token.character}` : token.character;
  });
  return `^${parts.join('')}$`;
}

/** A run of literal characters (already ASCII-lower-cased), or a number of `_` (one character each). */
type Piece = string | number;

interface CompiledPattern {
  /** Segments between the `%` signs (none of them empty, except a whole pattern without `%`). */
  segments: Piece[][];
  /** Whether the pattern has a `%` before its first segment / after its last. */
  openStart: boolean;
  openEnd: boolean;
  /** A pattern ending in a lone escape character, which matches nothing. */
  never: boolean;
  /** Whether a literal holds an ASCII letter: only then must the text be case-folded. */
  folds: boolean;
}

/** ASCII-only lower case, as SQLite's LIKE folds (a non-ASCII letter matches only itself). */
export function foldAscii(text: string): string {
  // toLowerCase is native and fast, but it also folds non-ASCII letters: use it only on ASCII text.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  return /[^\u0000-\u007f]/.test(text)
    ? text.replace(/[A-Z]+/g, (run) => run.toLowerCase())
    : text.toLowerCase();
}

export function compileLikePattern(pattern: string): CompiledPattern {
  const tokens = likeTokens(pattern);
  const segments: Piece[][] = [[]];
  for (const token of tokens ?? []) {
    const current = segments.at(-1) as Piece[];
    const last = current.at(-1);
    if (token.kind === 'many') segments.push([]);
    else if (token.kind === 'one') {
      if (typeof last === 'number') current[current.length - 1] = last + 1;
      else current.push(1);
    } else if (typeof last === 'string') current[current.length - 1] = last + token.character;
    else current.push(token.character);
  }
  const openStart = segments.length > 1 && (segments[0] as Piece[]).length === 0;
  const openEnd = segments.length > 1 && (segments.at(-1) as Piece[]).length === 0;
  const kept = segments.length > 1 ? segments.filter((segment) => segment.length > 0) : segments;
  const foldedSegments = kept.map((segment) =>
    segment.map((piece) => (typeof piece === 'string' ? foldAscii(piece) : piece)),
  );
  const folds = foldedSegments.some((segment) =>
    segment.some((piece) => typeof piece === 'string' && /[a-z]/.test(piece)),
  );
  return { segments: foldedSegments, openStart, openEnd, never: tokens === undefined, folds };
}

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** The position `count` characters (code points) after `at`, or -1 past the end. */
function skipForward(text: string, at: number, count: number): number {
  let position = at;
  for (let left = count; left > 0; left--) {
    if (position >= text.length) return -1;
    position += isHigh(text.charCodeAt(position)) && isLow(text.charCodeAt(position + 1)) ? 2 : 1;
  }
  return position;
}

/** The position `count` characters (code points) before `at`, or -1 before the start. */
function skipBack(text: string, at: number, count: number): number {
  let position = at;
  for (let left = count; left > 0; left--) {
    if (position <= 0) return -1;
    position -= isLow(text.charCodeAt(position - 1)) && isHigh(text.charCodeAt(position - 2)) ? 2 : 1;
  }
  return position;
}

function codePoints(segment: readonly Piece[]): number {
  return segment.reduce<number>(
    (sum, piece) => sum + (typeof piece === 'number' ? piece : Array.from(piece).length),
    0,
  );
}

/** A clock that throws once the deadline has passed; `spend` counts work between readings. */
export interface Budget {
  spend(units: number): void;
}

/** Where the segment ends when it is matched from `at`, or -1. */
function matchAt(text: string, at: number, segment: readonly Piece[], budget: Budget): number {
  let position = at;
  for (const piece of segment) {
    if (typeof piece === 'number') {
      position = skipForward(text, position, piece);
      budget.spend(piece);
    } else {
      budget.spend(piece.length);
      position = text.startsWith(piece, position) ? position + piece.length : -1;
    }
    if (position < 0) return -1;
  }
  return position;
}

/** The end of the segment's leftmost match starting at or after `from`, or -1. */
function findFrom(text: string, from: number, segment: readonly Piece[], budget: Budget): number {
  const first = segment[0];
  const leading = typeof first === 'number' ? first : 0;
  const anchor = segment[leading === 0 ? 0 : 1];
  if (anchor === undefined) return skipForward(text, from, leading);
  const literal = anchor as string;
  let search = from;
  for (;;) {
    const found = text.indexOf(literal, search);
    budget.spend(found < 0 ? text.length - search : found - search + literal.length);
    if (found < 0) return -1;
    const start = skipBack(text, found, leading);
    if (start >= from) {
      const end = matchAt(text, start, segment, budget);
      if (end >= 0) return end;
    }
    search = found + 1;
  }
}

/** Whether `text` (not folded) is LIKE the compiled pattern. */
export function likeMatches(text: string, pattern: CompiledPattern, budget: Budget): boolean {
  if (pattern.never) return false;
  const subject = pattern.folds ? foldAscii(text) : text;
  budget.spend(pattern.folds ? text.length : 0);
  const { segments, openStart, openEnd } = pattern;
  if (!openStart && !openEnd && segments.length === 1)
    return matchAt(subject, 0, segments[0] as Piece[], budget) === subject.length;
  let position = 0;
  let index = 0;
  if (!openStart) {
    position = matchAt(subject, 0, segments[0] as Piece[], budget);
    if (position < 0) return false;
    index = 1;
  }
  const middleEnd = openEnd ? segments.length : segments.length - 1;
  for (; index < middleEnd; index++) {
    position = findFrom(subject, position, segments[index] as Piece[], budget);
    if (position < 0) return false;
  }
  if (openEnd || index >= segments.length) return true;
  // The last segment sits at the very end, after everything matched before it.
  const last = segments[index] as Piece[];
  const start = skipBack(subject, subject.length, codePoints(last));
  return start >= position && matchAt(subject, start, last, budget) === subject.length;
}
