import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { identifier, passwordProblem, userNameProblem } from '../accounts/rules.ts';
import { filePathProblem } from '../channels/paths.ts';
import { isValidCheckedLevel } from '../contents/review.ts';
import { digestApiKey } from '../crypto/apiKeys.ts';
import { SCOPES } from '../principal.ts';
import { pathSegmentProblem, type UrlKind, urlProblem } from '../safeText.ts';
import {
  count,
  dateTime,
  flag,
  integer,
  nameList,
  nullableText,
  type RecordShape,
  recordId,
  recordSchema,
  requiredText,
  text,
} from './fields.ts';

/*
 * The records an import file holds, with the API's field names (the contract's Site, form A for
 * channels and contents, User and Administrator; docs/operating/cli.md). Defaults are the schema's, so a row imported with few fields equals one the
 * service would create. Dates left out become the time of the import (filled in by the planner).
 */

const optionalText = (fallback = '') => text.default(fallback);
const optionalCount = count.default(0);
/** A channel file path or file-path rule: relative to the site, as channel update requires. */
const filePath = text
  .superRefine((value, context) => {
    const problem = filePathProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  .default('');
/** A URL-valued field under the one URL rule the API applies (src/domain/safeText.ts). */
const checkUrl = (kind: UrlKind) => (value: string | null, context: z.RefinementCtx) => {
  const problem = value === null ? undefined : urlProblem(value, kind);
  if (problem) context.addIssue({ code: 'custom', message: problem });
};
const resourceUrl = text.superRefine(checkUrl('resource')).default('');
/** E-mail, mobile and openId: "" means none, kept as NULL so uniqueness applies to real values only. */
const optionalUnique = text.optional().transform(identifier);

export const siteSchema = recordSchema({
  id: recordId.optional(),
  siteDir: requiredText,
  siteName: requiredText,
  tableName: requiredText.default('siteserver_Content'),
  isRoot: flag.default(false),
  parentId: count.default(0),
  taxis: integer.default(0),
  // Checked against the attribute table by validateSiteAttributes, which names each bad key.
  attributes: z.unknown().optional(),
});

/** Per-channel extras of the original system; kept in Channel.extras. */
const channelExtras = {
  isChannelAddable: flag.optional(),
  isContentAddable: flag.optional(),
  isChannelCreatable: flag.optional(),
  isContentCreatable: flag.optional(),
  isAllContents: flag.optional(),
  isPreviewContents: flag.optional(),
  transIsAutomatic: flag.optional(),
  contentAttributesOfDisplay: text.optional(),
  transChannelIds: text.optional(),
  transChannelNames: text.optional(),
  transType: integer.optional(),
  transSiteId: integer.optional(),
  transDoneType: integer.optional(),
} satisfies RecordShape;

export const CHANNEL_EXTRA_NAMES = Object.keys(channelExtras);

/** Display widths (titleColumnWidth, hitsColumnWidth, ...) are extras too, whatever the column. */
export const COLUMN_WIDTH_FIELD = /^[a-z][A-Za-z0-9]*ColumnWidth$/;
export const columnWidth = integer.min(0, { error: 'must be 0 or more' });

export const channelSchema = recordSchema({
  id: recordId.optional(),
  guid: requiredText.optional(),
  siteId: recordId,
  parentId: count.optional(),
  channelName: requiredText,
  indexName: text
    .trim()
    .superRefine((value, context) => {
      const problem = value === '' ? undefined : pathSegmentProblem(value);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    })
    .optional()
    .transform((value) => (value ? value : null)),
  groupNames: nameList.default(''),
  taxis: integer.default(0),
  addDate: dateTime.optional(),
  createdDate: dateTime.optional(),
  lastModifiedDate: dateTime.optional(),
  imageUrl: resourceUrl,
  content: optionalText(),
  filePath,
  channelFilePathRule: filePath,
  contentFilePathRule: filePath,
  linkUrl: text.superRefine(checkUrl('link')).default(''),
  keywords: optionalText(),
  description: optionalText(),
  contentModelPluginId: optionalText(),
  contentRelatedPluginIds: optionalText(),
  linkType: optionalText('None'),
  channelTemplateId: optionalCount,
  contentTemplateId: optionalCount,
  isCreateChannelIfContentChanged: flag.default(true),
  createChannelIdsIfContentChanged: z
    .array(recordId, { error: 'must be an array of channel ids or null' })
    .nullable()
    .optional()
    .transform((ids) => (ids ? ids.join(',') : null)),
  listColumns: nullableText.default(null),
  defaultTaxisType: optionalText('OrderByTaxisDesc'),
  ...channelExtras,
});

const checkedLevel = integer.refine(isValidCheckedLevel, {
  error: 'must be -99 (draft), 0 (pending), 1 to 5 (passed) or -1 to -5 (rejected)',
});

export const contentSchema = recordSchema({
  id: recordId.optional(),
  guid: requiredText.optional(),
  siteId: recordId.optional(),
  channelId: recordId,
  adminId: optionalCount,
  lastEditAdminId: optionalCount,
  userId: optionalCount,
  taxis: integer.default(0),
  groupNames: nameList.default(''),
  tagNames: nameList.default(''),
  sourceId: optionalCount,
  referenceId: optionalCount,
  templateId: optionalCount,
  checked: flag.optional(),
  checkedLevel: checkedLevel.optional(),
  hits: optionalCount,
  hitsByDay: optionalCount,
  hitsByWeek: optionalCount,
  hitsByMonth: optionalCount,
  lastHitsDate: dateTime.nullable().default(null),
  downloads: optionalCount,
  imageUrlCount: optionalCount,
  videoUrlCount: optionalCount,
  fileUrlCount: optionalCount,
  content: text.optional(),
  body: text.optional(),
  title: optionalText(),
  subTitle: optionalText(),
  imageUrl: resourceUrl,
  videoUrl: resourceUrl,
  fileUrl: resourceUrl,
  summary: optionalText(),
  author: optionalText(),
  source: optionalText(),
  top: flag.default(false),
  recommend: flag.default(false),
  hot: flag.default(false),
  color: flag.default(false),
  linkType: optionalText('None'),
  linkUrl: nullableText.superRefine(checkUrl('link')).default(null),
  addUserName: optionalText(),
  lastEditUserName: optionalText(),
  writingUserName: optionalText(),
  addDate: dateTime.optional(),
  createdDate: dateTime.optional(),
  lastModifiedDate: dateTime.optional(),
  lastEditDate: dateTime.optional(),
});

/** A field checked by one of the account rules (src/domain/accounts), which gives the message. */
const ruled = (problemOf: (value: string) => string | undefined) =>
  text.superRefine((value, context) => {
    const problem = problemOf(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });
const userName = ruled(userNameProblem);
/**
 * Imported passwords are new passwords in plain text: the password rule applies. `null` (what an
 * export writes, since it carries no password material) leaves the account without a usable
 * password until one is set (`cms password`).
 */
const password = ruled((value) => passwordProblem(value)).nullable();

export const userSchema = recordSchema({
  id: recordId.optional(),
  userName,
  password,
  displayName: optionalText(),
  email: optionalUnique,
  mobile: optionalUnique,
  openId: optionalUnique,
  avatarUrl: resourceUrl,
  groupId: optionalCount,
  createDate: dateTime.optional(),
  lastResetPasswordDate: dateTime.optional(),
  lastActivityDate: dateTime.optional(),
  countOfLogin: optionalCount,
  countOfFailedLogin: optionalCount,
  countOfWriting: optionalCount,
  checked: flag.default(true),
  locked: flag.default(false),
});

export const administratorSchema = recordSchema({
  id: recordId.optional(),
  userName,
  password,
  displayName: optionalText(),
  email: optionalUnique,
  mobile: optionalUnique,
  creatorUserName: optionalText(),
  creationDate: dateTime.optional(),
  lastActivityDate: dateTime.optional(),
  countOfLogin: optionalCount,
  countOfFailedLogin: optionalCount,
  isLockedOut: flag.default(false),
  siteId: optionalCount,
  departmentId: optionalCount,
  areaId: optionalCount,
  siteIdCollection: text
    .regex(/^(\d+(,\d+)*)?$/, { error: 'must be site ids separated by commas' })
    .default(''),
});

export const MIN_IMPORTED_KEY_LENGTH = 32;

export const apiKeySchema = recordSchema({
  id: recordId.optional(),
  title: requiredText,
  // null (what an export writes: it carries no secret): the key is imported unusable until reset.
  key: text
    .min(MIN_IMPORTED_KEY_LENGTH, { error: `must be at least ${MIN_IMPORTED_KEY_LENGTH} characters` })
    .nullable(),
  scopes: z
    .array(z.enum(SCOPES, { error: `must be one of ${SCOPES.join(', ')}` }), {
      error: 'must be an array of scopes',
    })
    .min(1, { error: 'must name at least one scope' }),
  expiresAt: dateTime.nullable().default(null),
  // State an export carries beyond what key management shows when creating a key.
  createdAt: dateTime.optional(),
  lastUsedAt: dateTime.nullable().default(null),
  revokedAt: dateTime.nullable().default(null),
  rateLimitPerMinute: integer
    .min(1, { error: 'must be a positive integer or null' })
    .nullable()
    .default(null),
  // Only the digest goes further: the plain key is not kept in memory longer than needed. A key
  // without a secret gets the digest of a random one nobody knows.
}).transform(({ key, ...rest }) => ({
  ...rest,
  digest: digestApiKey(key ?? randomBytes(32).toString('base64url')),
}));

/*
 * What an export carries beyond the API's records: state the API does not show (the recycle bin,
 * lockouts, token versions, a content's stored extra settings). Kept apart from the API-shaped
 * schemas above, which test/domain/recordFields.test.ts compares with the contract.
 */
const lockedUntil = dateTime.nullable().default(null);
const tokenVersion = optionalCount;

export const contentFileSchema = contentSchema.extend({
  recycled: flag.default(false),
  recycledDate: dateTime.nullable().default(null),
  settings: z
    .record(z.string(), z.unknown(), { error: 'must be an object' })
    .default({})
    .transform((value) => JSON.stringify(value)),
});
/**
 * An uploaded avatar (src/domain/users/avatar.ts) as an export writes it: the stored PNG in base64.
 * The import decodes and re-encodes it as an upload is, so a file cannot store bytes that are not
 * the image they claim to be. A 1024 × 1024 PNG of noise is ~4 MiB, ~5.6 Mi characters in base64.
 */
export const AVATAR_PNG_MAX_CHARACTERS = 8 * 1024 * 1024;
const avatarPng = z
  .string({ error: 'must be a text' })
  .max(AVATAR_PNG_MAX_CHARACTERS, { error: `must be at most ${AVATAR_PNG_MAX_CHARACTERS} characters` })
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, { error: 'must be base64' })
  .optional();

export const userFileSchema = userSchema.extend({ lockedUntil, tokenVersion, avatarPng });
export const administratorFileSchema = administratorSchema.extend({ lockedUntil, tokenVersion });

export type SiteRecord = z.output<typeof siteSchema>;
export type ChannelRecord = z.output<typeof channelSchema>;
export type ContentRecord = z.output<typeof contentFileSchema>;
export type UserRecord = z.output<typeof userFileSchema>;
export type AdministratorRecord = z.output<typeof administratorFileSchema>;
export type ApiKeyRecord = z.output<typeof apiKeySchema>;

/**
 * Fields of the API's records that the service derives or does not keep: accepted, so a record
 * read from the API can be sent back as is, and ignored.
 */
export const IGNORED_FIELDS = {
  sites: [],
  channels: [
    'parentsPath',
    'parentsCount',
    'childrenCount',
    'children',
    'value',
    'label',
    'tableName',
    'navigationUrl',
    'isPreviewContentsExists',
  ],
  contents: [],
  users: ['passwordFormat'],
  administrators: ['passwordFormat', 'passwordSalt'],
  apiKeys: [],
} as const;
