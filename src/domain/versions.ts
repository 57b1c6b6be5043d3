import { DomainError } from './errors.ts';

/*
 * Conditional requests on a single record (docs/api/conditional-writes.md). A content, a channel,
 * a user, an administrator, an API key and a webhook subscription carry a `version` that every
 * write of their row increments in the same statement; the record's
 * strong ETag is that number. A write with If-Match is made conditional on the version in the
 * UPDATE itself, so of two editors holding the same validator exactly one wins.
 */

/** A record with its version, for an answer that carries the record's ETag. */
export interface Versioned<T> {
  record: T;
  version: number;
}

/** The increment every write of a versioned row carries in its data. */
export const NEXT_VERSION = { version: { increment: 1 } } as const;

/** The strong validator of a record at a version. */
export function strongETag(version: number): string {
  return `"v${version}"`;
}

/**
 * The strong validator of some selected fields of a record at a version (`fields`): the version's
 * tag with the selection's key, so that each selection of a version has a validator of its own.
 */
export function selectionETag(version: number, selectionKey: string): string {
  return `"v${version}-f${selectionKey}"`;
}

/** What an If-Match header asks: any current record (`*`), or one of these versions. */
export type Precondition = { kind: 'any' } | { kind: 'versions'; versions: number[] };

const ENTITY_TAG = /^\s*(W\/)?"([^"]*)"\s*$/;

/**
 * The versions an If-Match header names; undefined without the header (no precondition). Tags
 * are compared strongly (RFC 9110 §13.1.1): a weak tag, or one this service did not make, matches
 * no version, so the write is refused with 412 rather than made on a guess.
 */
export function parseIfMatch(header: string | undefined): Precondition | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === '*') return { kind: 'any' };
  const versions: number[] = [];
  for (const part of header.split(',')) {
    const match = ENTITY_TAG.exec(part);
    if (!match || match[1] !== undefined) continue;
    const version = /^v([1-9]\d{0,9})$/.exec(match[2] ?? '');
    if (version) versions.push(Number(version[1]));
  }
  return { kind: 'versions', versions };
}

/** The Prisma filter on `version` a precondition adds to a conditional write. */
export function versionFilter(precondition: Precondition | undefined): { version?: { in: number[] } } {
  return precondition?.kind === 'versions' ? { version: { in: precondition.versions } } : {};
}

/** A stale If-Match: nothing was written; the client is told the current validator. */
export class PreconditionFailed extends DomainError {
  readonly currentETag: string;

  constructor(what: string, currentVersion: number) {
    const current = strongETag(currentVersion);
    super(
      'precondition-failed',
      `${what} has changed since the validator in If-Match was read; its current ETag is ${current}`,
    );
    this.name = 'PreconditionFailed';
    this.currentETag = current;
  }
}

/**
 * After a write that changed no row: when a precondition was given and the record still exists,
 * its version did not match (412); otherwise the record is not there (null, the caller's 404).
 * Read in the write's transaction, so the version named is the one that refused the write.
 */
export async function refuseUnlessMissing(
  what: string,
  precondition: Precondition | undefined,
  current: () => Promise<{ version: number } | null>,
): Promise<null> {
  if (precondition === undefined) return null;
  const record = await current();
  if (record) throw new PreconditionFailed(what, record.version);
  return null;
}
