import type { ZodType, z } from 'zod';
import { contractSchema, type JsonSchema, refName, schemaProperties } from '../contractSchemas.ts';
import { type SiteAttributes, validateSiteAttributes } from '../sites/attributes.ts';
import { describeIssues, type ImportProblems, idOf, type RecordRef } from './fields.ts';
import {
  type AdministratorRecord,
  type ApiKeyRecord,
  administratorFileSchema,
  apiKeySchema,
  CHANNEL_EXTRA_NAMES,
  type ChannelRecord,
  COLUMN_WIDTH_FIELD,
  type ContentRecord,
  channelSchema,
  columnWidth,
  contentFileSchema,
  IGNORED_FIELDS,
  type SiteRecord,
  siteSchema,
  type UserRecord,
  userFileSchema,
} from './records.ts';
import type { ImportSource } from './source.ts';

/*
 * First pass over an import file: the shape of every record, without the database. Records that
 * fail are reported and left out of later passes, but the ids they claim are remembered so that
 * references to them do not produce a second, misleading "does not exist". Sites, channels,
 * accounts and keys are kept (they are few, and later checks need all of them at once); contents,
 * which may be millions, are not: the pass keeps only the ids, guids and channels they use, and the
 * write pass reads them again.
 */

export const TABLES = ['sites', 'channels', 'contents', 'users', 'administrators', 'apiKeys'] as const;
export type Table = (typeof TABLES)[number];

export interface Parsed<T> {
  ref: RecordRef;
  value: T;
}

export type ParsedSite = Parsed<Omit<SiteRecord, 'attributes'> & { attributes: Partial<SiteAttributes> }>;
export type ParsedChannel = Parsed<ChannelRecord & { extras: Record<string, unknown> }>;

/** What the first pass keeps of the contents: enough to check uniqueness and references. */
export interface ContentScan {
  /** Records of the contents section, valid or not. */
  count: number;
  /** Valid records. */
  valid: number;
  /** The position of the first valid record that claims each id and guid (later ones are duplicates). */
  idOwners: Map<number, number>;
  guidOwners: Map<string, number>;
  /** Every channel a valid content names. */
  channelIds: Set<number>;
  /** The highest id a valid content gives, 0 if none. */
  maxId: number;
}

export interface ParsedDocument {
  sites: ParsedSite[];
  channels: ParsedChannel[];
  contents: ContentScan;
  users: Parsed<UserRecord>[];
  administrators: Parsed<AdministratorRecord>[];
  apiKeys: Parsed<ApiKeyRecord>[];
  brokenIds: Record<Table, Set<number>>;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The fields the schema checks: without those the service ignores, and without the display widths,
 * which any name ending in ColumnWidth may carry (checked here, kept as extras).
 */
function schemaInput(
  table: Table,
  raw: Record<string, unknown>,
): { input: Record<string, unknown>; problems: string[] } {
  const input = { ...raw };
  const problems: string[] = [];
  for (const name of IGNORED_FIELDS[table]) delete input[name];
  if (table === 'channels') {
    for (const name of Object.keys(input)) {
      if (!COLUMN_WIDTH_FIELD.test(name)) continue;
      if (!columnWidth.safeParse(input[name]).success) {
        problems.push(`field '${name}' must be an integer, 0 or more`);
      }
      delete input[name];
    }
  }
  return { input, problems };
}

function finishSite(problems: ImportProblems) {
  return (
    value: SiteRecord,
    _raw: Record<string, unknown>,
    ref: RecordRef,
  ): ParsedSite['value'] | undefined => {
    if (value.attributes === undefined) return { ...value, attributes: {} };
    const checked = validateSiteAttributes(value.attributes);
    if (checked.ok) return { ...value, attributes: checked.value };
    for (const error of checked.errors) problems.add(ref, error.message);
    return undefined;
  };
}

/** Moves the original system's per-channel extras (named ones and display widths) into `extras`. */
function finishChannel(value: ChannelRecord, raw: Record<string, unknown>): ParsedChannel['value'] {
  const extras: Record<string, unknown> = Object.fromEntries(
    Object.entries(raw).filter(([key]) => COLUMN_WIDTH_FIELD.test(key)),
  );
  const rest: Record<string, unknown> = { ...value };
  for (const name of CHANNEL_EXTRA_NAMES) {
    if (rest[name] !== undefined) extras[name] = rest[name];
    delete rest[name];
  }
  return { ...(rest as ChannelRecord), extras };
}

interface RecordTypes {
  sites: ParsedSite['value'];
  channels: ParsedChannel['value'];
  contents: ContentRecord;
  users: UserRecord;
  administrators: AdministratorRecord;
  apiKeys: ApiKeyRecord;
}

type RecordParser<T> = (raw: unknown, ref: RecordRef, problems: ImportProblems) => T | undefined;

/**
 * The contract's schema whose `maxLength`s bound each table's stored texts: an import stores no
 * value the API would refuse for being too long (docs/security/time-limits.md lists the limits).
 */
const LENGTH_SCHEMAS: Readonly<Record<Table, string>> = {
  sites: 'Site',
  channels: 'UpdateChannelRequest',
  contents: 'UpdateContentRequest',
  users: 'CreateUserRequest',
  administrators: 'UpdateAdministratorRequest',
  apiKeys: 'CreateApiKeyRequest',
};

const resolved = (schema: JsonSchema): JsonSchema => {
  const name = refName(schema);
  return name === undefined ? schema : resolved(contractSchema(name));
};

/** Each field's longest text, and its items' (lists), as the contract bounds them. */
function lengthLimits(table: Table): Map<string, { max?: number; itemMax?: number }> {
  const limits = new Map<string, { max?: number; itemMax?: number }>();
  const numberOf = (value: unknown) => (typeof value === 'number' ? value : undefined);
  for (const [field, property] of schemaProperties(LENGTH_SCHEMAS[table])) {
    // A field may be one schema or a choice of them (a name list: a joined string or an array).
    const choices = [resolved(property)].flatMap((schema) => [schema, ...(schema.anyOf ?? []).map(resolved)]);
    let max: number | undefined;
    let itemMax: number | undefined;
    for (const schema of choices) {
      max ??= numberOf(schema.maxLength);
      if (schema.items !== undefined) itemMax ??= numberOf(resolved(schema.items).maxLength);
    }
    if (max !== undefined || itemMax !== undefined) limits.set(field, { max, itemMax });
  }
  return limits;
}

// A memo of values derived from the generated contract: the same for every database, never changed once made.
const LENGTH_LIMITS = new Map<Table, ReturnType<typeof lengthLimits>>();

/** JSON Schema's maxLength counts characters (code points), not UTF-16 units. */
const characters = (text: string) => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};

function lengthProblems(table: Table, raw: Record<string, unknown>): string[] {
  let limits = LENGTH_LIMITS.get(table);
  if (limits === undefined) {
    limits = lengthLimits(table);
    LENGTH_LIMITS.set(table, limits);
  }
  const problems: string[] = [];
  for (const [field, { max, itemMax }] of limits) {
    const value = raw[field];
    if (typeof value === 'string' && max !== undefined && characters(value) > max)
      problems.push(`field '${field}' must be at most ${max} characters`);
    if (Array.isArray(value) && itemMax !== undefined)
      value.forEach((item, index) => {
        if (typeof item === 'string' && characters(item) > itemMax)
          problems.push(`field '${field}[${index}]' must be at most ${itemMax} characters`);
      });
  }
  return problems;
}

/**
 * Parses one record. `finish` completes a record whose fields passed (checks that need the whole
 * record, reshaping); it reports its own problems and returns undefined on failure.
 */
function recordParser<S extends ZodType, T = z.output<S>>(
  table: Table,
  schema: S,
  finish: (
    value: z.output<S>,
    rawRecord: Record<string, unknown>,
    ref: RecordRef,
    problems: ImportProblems,
  ) => T | undefined = (value) => value as T,
): RecordParser<T> {
  return (raw, ref, problems) => {
    if (!isObject(raw)) {
      problems.add(ref, 'must be an object');
      return undefined;
    }
    const { input, problems: fieldProblems } = schemaInput(table, raw);
    const result = schema.safeParse(input);
    const messages = [
      ...(result.success ? [] : describeIssues(result.error.issues, raw)),
      ...fieldProblems,
      ...lengthProblems(table, raw),
    ];
    for (const message of messages) problems.add(ref, message);
    return result.success && messages.length === 0 ? finish(result.data, raw, ref, problems) : undefined;
  };
}

const PARSERS: { [K in Table]: RecordParser<RecordTypes[K]> } = {
  sites: recordParser('sites', siteSchema, (value, raw, ref, problems) =>
    finishSite(problems)(value, raw, ref),
  ),
  channels: recordParser('channels', channelSchema, finishChannel),
  contents: recordParser('contents', contentFileSchema),
  users: recordParser('users', userFileSchema),
  administrators: recordParser('administrators', administratorFileSchema),
  apiKeys: recordParser('apiKeys', apiKeySchema),
};

const isTable = (name: string): name is Table => (TABLES as readonly string[]).includes(name);

/**
 * Parses one content record again in the write pass. Its problems were reported by the first
 * pass: here they go to `problems`, which the caller throws away.
 */
export function parseContent(
  raw: unknown,
  ref: RecordRef,
  problems: ImportProblems,
): ContentRecord | undefined {
  return PARSERS.contents(raw, ref, problems);
}

const LOWER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The key under which the first pass remembers a content's guid: a fresh string (a value cut out
 * of the parser's text may keep that whole text alive, megabytes per guid), and for the usual
 * lower-case UUID its 16 bytes rather than 36 characters ('u' and 'x' keep the two kinds apart).
 */
export function guidKey(guid: string): string {
  if (LOWER_UUID.test(guid)) return `u${Buffer.from(guid.replaceAll('-', ''), 'hex').toString('latin1')}`;
  return `x${Buffer.from(guid, 'utf8').toString('utf8')}`;
}

/** A deep copy whose strings no longer share memory with the text they were parsed from. */
function detached(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/** The first pass: every record checked, contents summarised, problems reported. */
export async function scanDocument(
  source: ImportSource,
  problems: ImportProblems,
  onRecord: () => void = () => {},
): Promise<ParsedDocument> {
  const brokenIds = Object.fromEntries(TABLES.map((table) => [table, new Set<number>()])) as Record<
    Table,
    Set<number>
  >;
  const contents: ContentScan = {
    count: 0,
    valid: 0,
    idOwners: new Map(),
    guidOwners: new Map(),
    channelIds: new Set(),
    maxId: 0,
  };
  const doc: ParsedDocument = {
    sites: [],
    channels: [],
    contents,
    users: [],
    administrators: [],
    apiKeys: [],
    brokenIds,
  };
  const seen = new Set<string>();
  /** The section whose records are read, or undefined while records are skipped. */
  let reading: Table | undefined;

  for await (const entry of source.entries()) {
    if (entry.kind === 'notObject') {
      problems.addTop('', `the import file must be a JSON object with the keys ${TABLES.join(', ')}`);
      continue;
    }
    if (entry.kind === 'section') {
      reading = undefined;
      if (!isTable(entry.key)) {
        problems.addTop(entry.key, `unknown key (expected ${TABLES.join(', ')})`);
      } else if (seen.has(entry.key)) {
        problems.addTop(entry.key, 'appears more than once (each section must appear once)');
      } else if (!entry.array) {
        problems.addTop(entry.key, 'must be an array of records');
      } else {
        reading = entry.key;
      }
      seen.add(entry.key);
      continue;
    }
    if (reading === undefined) continue;
    onRecord();
    const ref: RecordRef = { table: reading, index: entry.index, id: idOf(entry.value) };
    if (reading === 'contents') contents.count++;
    // Records kept whole are copied out of the parser's text first (see detached).
    const raw = reading === 'contents' ? entry.value : detached(entry.value);
    const value = PARSERS[reading](raw, ref, problems);
    if (value === undefined) {
      if (ref.id !== undefined) brokenIds[reading].add(ref.id);
      continue;
    }
    if (reading !== 'contents') {
      // Every other section is kept whole, as its parser checked it (the parsers are per table).
      (doc[reading] as { ref: RecordRef; value: unknown }[]).push({ ref, value });
      continue;
    }
    // Contents are only summarised here; the second pass reads them again.
    const content = value as ContentRecord;
    contents.valid++;
    if (content.id !== undefined) {
      if (!contents.idOwners.has(content.id)) contents.idOwners.set(content.id, entry.index);
      if (content.id > contents.maxId) contents.maxId = content.id;
    }
    if (content.guid !== undefined) {
      const key = guidKey(content.guid);
      if (!contents.guidOwners.has(key)) contents.guidOwners.set(key, entry.index);
    }
    contents.channelIds.add(content.channelId);
  }
  return doc;
}
