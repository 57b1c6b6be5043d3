import type { Db } from '../../db/client.ts';
import { conflict, describeFields, type FieldProblem } from '../errors.ts';
import { type AccountKind, identifier, UNIQUE_ACCOUNT_FIELDS, type UniqueAccountField } from './rules.ts';

/*
 * Uniqueness of an account's identifying values against the database, for the operations that
 * create or change one account. (The import checks a whole file at once against the same fields,
 * see src/domain/import.) A clash is a `conflict`: the contract's problem type for a value that
 * must be unique (400).
 */

export type AccountCandidate = Partial<Record<UniqueAccountField, string | null>>;

/** One statement over the kind's table: the accounts holding any of the candidate's values. */
function holders(db: Db, kind: AccountKind, wanted: [UniqueAccountField, string][]) {
  const where = { OR: wanted.map(([field, value]) => ({ [field]: value })) };
  if (kind === 'users') {
    return db.user.findMany({
      where,
      select: { id: true, userName: true, email: true, mobile: true, openId: true },
    });
  }
  return db.administrator.findMany({
    where,
    select: { id: true, userName: true, email: true, mobile: true },
  });
}

/**
 * The candidate's values that another account of the same kind already holds, by field. `exceptId`
 * is the account being changed (its own values are not a clash). Empty values are never checked.
 */
export async function accountConflicts(
  db: Db,
  kind: AccountKind,
  candidate: AccountCandidate,
  exceptId?: number,
): Promise<FieldProblem[]> {
  const fields: readonly UniqueAccountField[] = UNIQUE_ACCOUNT_FIELDS[kind];
  const wanted = fields.flatMap((field): [UniqueAccountField, string][] => {
    const value = field === 'userName' ? (candidate.userName ?? null) : identifier(candidate[field]);
    return value === null ? [] : [[field, value]];
  });
  if (wanted.length === 0) return [];
  const rows: Partial<Record<UniqueAccountField | 'id', unknown>>[] = await holders(db, kind, wanted);
  const others = rows.filter((row) => row.id !== exceptId);
  return wanted
    .filter(([field, value]) => others.some((row) => row[field] === value))
    .map(([field, value]) => ({ field, message: `'${value}' is already used by another account` }));
}

/** Throws a `conflict` naming every field whose value another account of the kind holds. */
export async function assertAccountUnique(
  db: Db,
  kind: AccountKind,
  candidate: AccountCandidate,
  exceptId?: number,
): Promise<void> {
  const problems = await accountConflicts(db, kind, candidate, exceptId);
  if (problems.length > 0) throw conflict(describeFields(problems), problems);
}
