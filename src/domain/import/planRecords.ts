import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../db/models.ts';
import type { StoredPassword } from '../accounts/passwords.ts';
import { type AccountKind, UNIQUE_ACCOUNT_FIELDS, type UniqueAccountField } from '../accounts/rules.ts';
import { type ReviewState, reviewStateOfDecision, reviewStateOfLevel } from '../contents/review.ts';
import { DomainError } from '../errors.ts';
import { type AvatarImage, reencodeAvatar } from '../users/avatarImage.ts';
import { type ContentScan, guidKey, type Parsed, type ParsedDocument } from './document.ts';
import { claimed, type ImportProblems, idCounter, type RecordRef, UniqueCheck } from './fields.ts';
import type { StructurePlan } from './planStructure.ts';
import type { ContentRecord } from './records.ts';
import type { DbState, ExistingAccounts } from './state.ts';

/*
 * Contents, users, administrators and API keys: uniqueness against the file and the database,
 * references into the site structure, review state, and the rows to insert.
 */

/** An account imported without a password: no MD5 digest derives to an empty hash, so no login succeeds. */
export const NO_PASSWORD: StoredPassword = { passwordHash: '', passwordSalt: '' };

/** Hashes of the imported plain-text passwords, by the parsed record they belong to. */
export type Passwords = ReadonlyMap<object, StoredPassword>;

/** Replaces the date fields the record left out with the time of the import. */
function datesOrNow<T extends object, K extends keyof T>(record: T, names: readonly K[], now: Date) {
  const filled = { ...record } as T & Record<K, Date>;
  for (const name of names) if (filled[name] === undefined) (filled as Record<K, Date>)[name] = now;
  return filled;
}

function reviewState(
  ref: RecordRef,
  value: ContentRecord,
  siteId: number,
  siteLevel: number,
  problems: ImportProblems,
): ReviewState | undefined {
  if (value.checkedLevel === undefined) {
    return value.checked === undefined
      ? { checked: false, checkedLevel: 0 }
      : reviewStateOfDecision(value.checked, siteLevel);
  }
  const state = reviewStateOfLevel(value.checkedLevel, siteLevel);
  if (value.checked === undefined || value.checked === state.checked) return state;
  problems.add(
    ref,
    `checked ${value.checked} contradicts checkedLevel ${value.checkedLevel} (site ${siteId} approves at level ${siteLevel})`,
  );
  return undefined;
}

/**
 * Contents, planned batch by batch in the write pass: the first pass found which record owns each
 * id and guid, so a batch needs only the database's answer for its own ids and guids.
 */
export class ContentPlanner {
  private readonly nextId: () => number;

  constructor(
    private readonly scan: ContentScan,
    private readonly structure: StructurePlan,
    private readonly problems: ImportProblems,
    maxStoredId: number,
    private readonly now: Date,
  ) {
    this.nextId = idCounter([maxStoredId, scan.maxId]);
  }

  /**
   * False (and a problem reported) when an earlier record of the file or the database has the value;
   * the file's first owner of each id and guid was found by the scan (the first pass).
   */
  private claim(
    ref: RecordRef,
    field: string,
    key: number | string | undefined,
    ownerIndex: number | undefined,
    stored: boolean,
  ) {
    if (key === undefined) return true;
    const what = `${field} ${typeof key === 'string' ? `'${key}'` : String(key)}`;
    const owner =
      ownerIndex !== undefined && ownerIndex !== ref.index
        ? { table: ref.table, index: ownerIndex }
        : undefined;
    return claimed(this.problems, ref, what, owner, () => stored);
  }

  plan(
    batch: readonly Parsed<ContentRecord>[],
    stored: { ids: ReadonlySet<number>; guids: ReadonlySet<string> },
  ): Prisma.ContentCreateManyInput[] {
    const { structure, problems } = this;
    const rows: Prisma.ContentCreateManyInput[] = [];
    for (const { ref, value } of batch) {
      const fresh = [
        this.claim(
          ref,
          'id',
          value.id,
          value.id === undefined ? undefined : this.scan.idOwners.get(value.id),
          value.id !== undefined && stored.ids.has(value.id),
        ),
        this.claim(
          ref,
          'guid',
          value.guid,
          value.guid === undefined ? undefined : this.scan.guidOwners.get(guidKey(value.guid)),
          value.guid !== undefined && stored.guids.has(value.guid),
        ),
      ].every(Boolean);
      const siteId = structure.channelSites.get(value.channelId);
      if (structure.brokenChannelIds.has(value.channelId) || structure.brokenSiteIds.has(siteId ?? 0))
        continue;
      if (value.siteId !== undefined && structure.brokenSiteIds.has(value.siteId)) continue;
      if (siteId === undefined) {
        problems.add(ref, `channel ${value.channelId} does not exist`);
        continue;
      }
      if (value.siteId !== undefined && value.siteId !== siteId) {
        problems.add(
          ref,
          structure.siteLevels.has(value.siteId)
            ? `channel ${value.channelId} belongs to site ${siteId}, not site ${value.siteId}`
            : `site ${value.siteId} does not exist`,
        );
        continue;
      }
      const review = reviewState(ref, value, siteId, structure.siteLevels.get(siteId) ?? 1, problems);
      if (!fresh || !review) continue;
      const { id, guid, content, body, checked: _checked, checkedLevel: _checkedLevel, ...fields } = value;
      rows.push({
        ...datesOrNow(fields, ['addDate', 'createdDate', 'lastModifiedDate', 'lastEditDate'], this.now),
        id: id ?? this.nextId(),
        guid: guid ?? randomUUID(),
        siteId,
        body: body ?? content ?? '',
        ...review,
      });
    }
    return rows;
  }
}

type AccountRecord = { id?: number | undefined; password: string | null } & Partial<
  Record<UniqueAccountField, string | null>
>;

/** Users and administrators alike: every identifying value is unique within its kind. */
function planAccounts<T extends AccountRecord>(
  kind: AccountKind,
  records: readonly Parsed<T>[],
  existing: ExistingAccounts,
  maxId: number,
  problems: ImportProblems,
  passwords: Passwords,
  checkReferences: (ref: RecordRef, value: T) => boolean = () => true,
) {
  const ids = new UniqueCheck<number>('id', (id) => existing.ids.has(id), problems);
  const fields: readonly UniqueAccountField[] = UNIQUE_ACCOUNT_FIELDS[kind];
  const unique = fields.map(
    (field) =>
      [
        field,
        new UniqueCheck<string>(field, (value) => existing.values[field].has(value), problems),
      ] as const,
  );
  const nextId = idCounter([maxId, ...records.map((record) => record.value.id)]);
  const rows: (Omit<T, 'password' | 'id'> & StoredPassword & { id: number })[] = [];
  for (const { ref, value } of records) {
    const checks = [
      ids.claim(ref, value.id),
      ...unique.map(([field, check]) => check.claim(ref, value[field], `'${value[field]}'`)),
      checkReferences(ref, value),
    ];
    const stored = value.password === null ? NO_PASSWORD : passwords.get(value);
    if (!stored) throw new Error(`${ref.table}[${ref.index}]: password was not hashed`);
    if (checks.includes(false)) continue;
    const { password: _password, id, ...fields } = value;
    rows.push({ ...fields, ...stored, id: id ?? nextId() });
  }
  return rows;
}

/** The users' uploaded avatars, each re-encoded as an upload is, by the base64 text of the file. */
export type ImportedAvatars = ReadonlyMap<string, AvatarImage>;

/**
 * Decodes and re-encodes every user's `avatarPng` (before the transaction opens: decoding takes
 * time); one that is not an accepted image is a problem of its record.
 */
export function decodeAvatars(doc: ParsedDocument, problems: ImportProblems): ImportedAvatars {
  const images = new Map<string, AvatarImage>();
  for (const { ref, value } of doc.users) {
    const text = value.avatarPng;
    if (text === undefined || images.has(text)) continue;
    try {
      images.set(text, reencodeAvatar(Buffer.from(text, 'base64')));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      problems.add(ref, `field 'avatarPng': ${error.message}`);
    }
  }
  return images;
}

export function planUsers(
  doc: ParsedDocument,
  state: DbState,
  problems: ImportProblems,
  passwords: Passwords,
  now: Date,
  images: ImportedAvatars,
): { users: Prisma.UserCreateManyInput[]; avatars: Prisma.UserAvatarCreateManyInput[] } {
  const avatars: Prisma.UserAvatarCreateManyInput[] = [];
  const users = planAccounts('users', doc.users, state.users, state.maxIds.users, problems, passwords).map(
    ({ avatarPng, ...row }) => {
      const image = avatarPng === undefined ? undefined : images.get(avatarPng);
      if (image !== undefined) {
        const { png, width, height } = image;
        avatars.push({ userId: row.id, bytes: new Uint8Array(png), width, height, updatedAt: now });
      }
      return datesOrNow(row, ['createDate', 'lastResetPasswordDate', 'lastActivityDate'], now);
    },
  );
  return { users, avatars };
}

export function planAdministrators(
  doc: ParsedDocument,
  state: DbState,
  structure: StructurePlan,
  problems: ImportProblems,
  passwords: Passwords,
  now: Date,
): Prisma.AdministratorCreateManyInput[] {
  const siteExists = (id: number) => structure.siteLevels.has(id) || structure.brokenSiteIds.has(id);
  const checkSites = (ref: RecordRef, value: { siteId: number; siteIdCollection: string }) => {
    const missing = [
      ...(value.siteId === 0 ? [] : [value.siteId]),
      ...(value.siteIdCollection === '' ? [] : value.siteIdCollection.split(',').map(Number)),
    ].filter((id) => !siteExists(id));
    for (const id of new Set(missing)) problems.add(ref, `site ${id} does not exist`);
    return missing.length === 0;
  };
  return planAccounts(
    'administrators',
    doc.administrators,
    state.administrators,
    state.maxIds.administrators,
    problems,
    passwords,
    checkSites,
  ).map((row) => datesOrNow(row, ['creationDate', 'lastActivityDate'], now));
}

export function planApiKeys(
  doc: ParsedDocument,
  state: DbState,
  problems: ImportProblems,
  now: Date,
): Prisma.ApiKeyCreateManyInput[] {
  const ids = new UniqueCheck<number>('id', (id) => state.apiKeyIds.has(id), problems);
  const digests = new UniqueCheck<string>('key', (digest) => state.apiKeyDigests.has(digest), problems);
  const nextId = idCounter([state.maxIds.apiKeys, ...doc.apiKeys.map((key) => key.value.id)]);
  return doc.apiKeys.flatMap(({ ref, value }) => {
    const fresh = [ids.claim(ref, value.id), digests.claim(ref, value.digest, '')];
    if (fresh.includes(false)) return [];
    return [
      {
        id: value.id ?? nextId(),
        title: value.title,
        digest: value.digest,
        scopes: value.scopes.join(','),
        expiresAt: value.expiresAt,
        createdAt: value.createdAt ?? now,
        lastUsedAt: value.lastUsedAt,
        revokedAt: value.revokedAt,
        rateLimitPerMinute: value.rateLimitPerMinute,
      },
    ];
  });
}
