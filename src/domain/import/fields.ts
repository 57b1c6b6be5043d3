import { type ZodType, z } from 'zod';
import { parseDateTime } from '../dates.ts';
import { joinList } from '../lists.ts';

/*
 * Building blocks of the import: field schemas (each carrying the message an operator reads after
 * "field 'x' ", so one formatter turns every zod issue into a line naming record and field), the
 * problem list, uniqueness checks, id assignment and batching.
 */

export const text = z.string({ error: 'must be a string' });
export const nullableText = z.string({ error: 'must be a string or null' }).nullable();
export const integer = z.int({ error: 'must be an integer' });
export const count = integer.min(0, { error: 'must be 0 or more' });
export const recordId = integer.min(1, { error: 'must be a positive integer' });
export const flag = z.boolean({ error: 'must be true or false' });
export const requiredText = text.trim().min(1, { error: 'must not be empty' });

export const dateTime = text.transform((value, context) => {
  const date = parseDateTime(value);
  if (date) return date;
  context.addIssue({ code: 'custom', message: 'must be a date-time yyyy-MM-dd HH:mm:ss' });
  return z.NEVER;
});

/** Group and tag names: an array of strings, stored comma-joined. */
export const nameList = z
  .array(text, { error: 'must be an array of strings' })
  .transform((names) => joinList(names));

export type RecordShape = Record<string, ZodType>;

export function recordSchema<S extends RecordShape>(shape: S) {
  return z.strictObject(shape, { error: 'must be an object' });
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`))
    .join('');
}

/** Messages for the issues of one record, each without the record's label. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], raw: unknown): string[] {
  const given = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `unknown field '${key}'`);
    if (issue.path.length === 0) return [`record ${issue.message}`];
    const field = formatPath(issue.path);
    const top = String(issue.path[0]);
    if (issue.code === 'invalid_type' && issue.path.length === 1 && given[top] === undefined) {
      return [`field '${field}' is required`];
    }
    return [`field '${field}' ${issue.message}`];
  });
}

/** Where an error was found: the record (table and position in the file) and, if known, a field. */
export interface RecordRef {
  table: string;
  index: number;
  /** The id the file gave the record, if any: operators search their file by it. */
  id?: number | undefined;
}

export function idOf(raw: unknown): number | undefined {
  const id = typeof raw === 'object' && raw !== null ? (raw as { id?: unknown }).id : undefined;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : undefined;
}

/** Collects every problem of an import, so the operator can fix the whole file in one pass. */
export class ImportProblems {
  private readonly entries: { table: number; index: number; path: string; message: string }[] = [];

  /** `tables` in the order the file's sections are reported in. */
  constructor(private readonly tables: readonly string[]) {}

  add(ref: RecordRef, message: string): void {
    const path = `${ref.table}[${ref.index}]`;
    const label = ref.id === undefined ? path : `${path} (id ${ref.id})`;
    this.entries.push({
      table: this.tables.indexOf(ref.table),
      index: ref.index,
      path,
      message: `${label}: ${message}`,
    });
  }

  /** A problem of the file or of a whole section rather than of one record. */
  addTop(path: string, message: string): void {
    this.entries.push({ table: -1, index: -1, path, message: path === '' ? message : `${path}: ${message}` });
  }

  get count(): number {
    return this.entries.length;
  }

  /** Ordered as the file is: by section, then record (problems are found pass by pass, not in file order). */
  get list(): { path: string; message: string }[] {
    return [...this.entries]
      .sort((a, b) => a.table - b.table || a.index - b.index)
      .map(({ path, message }) => ({ path, message }));
  }
}

/** Splits a list into slices small enough for one statement's bound parameters on both databases. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

/**
 * One unique key of a table (id, name, e-mail ...): the first record of the file that uses a value
 * owns it; a later one, or one whose value the database already holds, is a problem.
 */
export class UniqueCheck<K> {
  private readonly owners = new Map<K, RecordRef>();

  constructor(
    private readonly field: string,
    private readonly existing: (key: K) => boolean,
    private readonly problems: ImportProblems,
  ) {}

  /** False (and a problem reported) when the value is taken; null and undefined are never taken. */
  claim(ref: RecordRef, key: K | null | undefined, shown: string = String(key)): boolean {
    if (key === null || key === undefined) return true;
    const owner = this.owners.get(key);
    if (owner === undefined) this.owners.set(key, ref);
    const what = shown === '' ? this.field : `${this.field} ${shown}`;
    return claimed(this.problems, ref, what, owner, () => this.existing(key));
  }
}

/**
 * Whether a record may have a unique value: not when an earlier record of the file owns it, nor
 * when the database holds it already (asked only when no record of the file owns it); the first
 * reason is reported as the record's problem.
 */
export function claimed(
  problems: ImportProblems,
  ref: RecordRef,
  what: string,
  owner: RecordRef | undefined,
  stored: () => boolean,
): boolean {
  if (owner !== undefined) {
    problems.add(ref, `duplicate ${what} (also ${owner.table}[${owner.index}])`);
    return false;
  }
  if (stored()) {
    problems.add(ref, `${what} already exists`);
    return false;
  }
  return true;
}

/** The next free id of a table: above every id the database or the file already uses. */
export function idCounter(used: Iterable<number | undefined>): () => number {
  let highest = 0;
  for (const id of used) if (id !== undefined && id > highest) highest = id;
  let next = highest + 1;
  return () => next++;
}
