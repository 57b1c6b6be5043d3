import type { ZodType, z } from 'zod';
import { type SiteAttributes, validateSiteAttributes } from '../sites/attributes.ts';
import { describeIssues, type ImportProblems, idOf, type RecordRef } from './fields.ts';
import {
  type AdministratorRecord,
  type ApiKeyRecord,
  administratorSchema,
  apiKeySchema,
  CHANNEL_EXTRA_NAMES,
  type ChannelRecord,
  COLUMN_WIDTH_FIELD,
  type ContentRecord,
  channelSchema,
  columnWidth,
  contentSchema,
  IGNORED_FIELDS,
  type SiteRecord,
  siteSchema,
  type UserRecord,
  userSchema,
} from './records.ts';

/*
 * First pass over an import file: the shape of every record, without the database. Records that
 * fail are reported and left out of later passes, but the ids they claim are remembered so that
 * references to them do not produce a second, misleading "does not exist".
 */

export const TABLES = ['sites', 'channels', 'contents', 'users', 'administrators', 'apiKeys'] as const;
export type Table = (typeof TABLES)[number];

export interface Parsed<T> {
  ref: RecordRef;
  value: T;
}

export type ParsedSite = Parsed<Omit<SiteRecord, 'attributes'> & { attributes: Partial<SiteAttributes> }>;
export type ParsedChannel = Parsed<ChannelRecord & { extras: Record<string, unknown> }>;

export interface ParsedDocument {
  sites: ParsedSite[];
  channels: ParsedChannel[];
  contents: Parsed<ContentRecord>[];
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

/**
 * Parses one table's records. `finish` completes a record whose fields passed (checks that need
 * the whole record, reshaping); it reports its own problems and returns undefined on failure.
 */
function parseTable<S extends ZodType, T = z.output<S>>(
  table: Table,
  raw: unknown,
  schema: S,
  context: { problems: ImportProblems; brokenIds: Record<Table, Set<number>> },
  finish: (value: z.output<S>, rawRecord: Record<string, unknown>, ref: RecordRef) => T | undefined = (
    value,
  ) => value as T,
): Parsed<T>[] {
  const { problems } = context;
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    problems.addTop(table, 'must be an array of records');
    return [];
  }
  const parsed: Parsed<T>[] = [];
  raw.forEach((rawRecord: unknown, index) => {
    const ref: RecordRef = { table, index, id: idOf(rawRecord) };
    let value: T | undefined;
    if (!isObject(rawRecord)) {
      problems.add(ref, 'must be an object');
    } else {
      const { input, problems: fieldProblems } = schemaInput(table, rawRecord);
      const result = schema.safeParse(input);
      const messages = [
        ...(result.success ? [] : describeIssues(result.error.issues, rawRecord)),
        ...fieldProblems,
      ];
      for (const message of messages) problems.add(ref, message);
      if (result.success && messages.length === 0) value = finish(result.data, rawRecord, ref);
    }
    if (value !== undefined) parsed.push({ ref, value });
    else if (ref.id !== undefined) context.brokenIds[table].add(ref.id);
  });
  return parsed;
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

export function parseDocument(document: unknown, problems: ImportProblems): ParsedDocument {
  const brokenIds = Object.fromEntries(TABLES.map((table) => [table, new Set<number>()])) as Record<
    Table,
    Set<number>
  >;
  const empty: ParsedDocument = {
    sites: [],
    channels: [],
    contents: [],
    users: [],
    administrators: [],
    apiKeys: [],
    brokenIds,
  };
  if (!isObject(document)) {
    problems.addTop('', `the import file must be a JSON object with the keys ${TABLES.join(', ')}`);
    return empty;
  }
  for (const key of Object.keys(document)) {
    if (!(TABLES as readonly string[]).includes(key)) {
      problems.addTop(key, `unknown key (expected ${TABLES.join(', ')})`);
    }
  }

  const context = { problems, brokenIds };
  const sites = parseTable('sites', document.sites, siteSchema, context, finishSite(problems));
  const channels = parseTable('channels', document.channels, channelSchema, context, finishChannel);

  return {
    sites,
    channels,
    contents: parseTable('contents', document.contents, contentSchema, context),
    users: parseTable('users', document.users, userSchema, context),
    administrators: parseTable('administrators', document.administrators, administratorSchema, context),
    apiKeys: parseTable('apiKeys', document.apiKeys, apiKeySchema, context),
    brokenIds,
  };
}
