import type { z } from 'zod';
import type { Administrator, ApiKey, Channel, Content, Site, User } from '../../db/models.ts';
import { parseScopes } from '../apiKeys/scopes.ts';
import type {
  administratorFileSchema,
  apiKeySchema,
  channelSchema,
  contentFileSchema,
  siteSchema,
  userFileSchema,
} from '../import/records.ts';
import { readJsonObject } from '../jsonObject.ts';
import { splitList } from '../lists.ts';

/*
 * A stored row as a record of the import file. Each function's result is typed as the import's
 * input for that table, so the compiler holds export and import to one format. Dates are ISO 8601
 * instants in UTC with milliseconds (the import reads them too): exact, and independent of TZ.
 * Nothing secret leaves: accounts carry `password: null`, keys `key: null`.
 */

type Input<S extends z.ZodType> = z.input<S>;

const instant = (date: Date) => date.toISOString();
const instantOrNull = (date: Date | null) => (date === null ? null : instant(date));
/** The optional unique account fields: absent rather than null (the import reads "" and absent alike). */
const present = <K extends string>(key: K, value: string | null) =>
  (value === null ? {} : { [key]: value }) as Partial<Record<K, string>>;

export function siteRecord(row: Site): Input<typeof siteSchema> {
  return {
    id: row.id,
    siteDir: row.siteDir,
    siteName: row.siteName,
    tableName: row.tableName,
    isRoot: row.isRoot,
    parentId: row.parentId,
    taxis: row.taxis,
    attributes: readJsonObject(row.attributes),
  };
}

/** Derived tree fields are left out (the import derives them); extras return to their own keys, sorted. */
export function channelRecord(row: Channel): Input<typeof channelSchema> & Record<string, unknown> {
  const extras = readJsonObject(row.extras);
  const sortedExtras = Object.fromEntries(
    Object.keys(extras)
      .sort()
      .map((key) => [key, extras[key]]),
  );
  const linked = row.createChannelIdsIfContentChanged;
  return {
    id: row.id,
    guid: row.guid,
    siteId: row.siteId,
    parentId: row.parentId,
    channelName: row.channelName,
    ...(row.indexName === null ? {} : { indexName: row.indexName }),
    groupNames: splitList(row.groupNames),
    taxis: row.taxis,
    addDate: instant(row.addDate),
    createdDate: instant(row.createdDate),
    lastModifiedDate: instant(row.lastModifiedDate),
    imageUrl: row.imageUrl,
    content: row.content,
    filePath: row.filePath,
    channelFilePathRule: row.channelFilePathRule,
    contentFilePathRule: row.contentFilePathRule,
    linkUrl: row.linkUrl,
    keywords: row.keywords,
    description: row.description,
    contentModelPluginId: row.contentModelPluginId,
    contentRelatedPluginIds: row.contentRelatedPluginIds,
    linkType: row.linkType,
    channelTemplateId: row.channelTemplateId,
    contentTemplateId: row.contentTemplateId,
    isCreateChannelIfContentChanged: row.isCreateChannelIfContentChanged,
    createChannelIdsIfContentChanged: linked === null ? null : splitList(linked).map(Number),
    listColumns: row.listColumns,
    defaultTaxisType: row.defaultTaxisType,
    ...sortedExtras,
  };
}

/**
 * Every column of a content, as the import reads it: the record is the row itself (a content holds
 * no secret, so a column added to the model leaves with it, and the round-trip test holds the
 * import to it), with lists, settings and dates in their file form.
 */
/** The row's `version` (its ETag, for conditional writes) is not content: an import starts it anew. */
export function contentRecord(row: Content): Input<typeof contentFileSchema> {
  const { groupNames, tagNames, settings, lastHitsDate, recycledDate, version: _version, ...plain } = row;
  return {
    ...plain,
    groupNames: splitList(groupNames),
    tagNames: splitList(tagNames),
    settings: readJsonObject(settings),
    lastHitsDate: instantOrNull(lastHitsDate),
    recycledDate: instantOrNull(recycledDate),
    addDate: instant(row.addDate),
    createdDate: instant(row.createdDate),
    lastModifiedDate: instant(row.lastModifiedDate),
    lastEditDate: instant(row.lastEditDate),
  };
}

/** `avatar`: the PNG the user uploaded, when there is one. */
export function userRecord(row: User, avatar?: Uint8Array): Input<typeof userFileSchema> {
  return {
    id: row.id,
    userName: row.userName,
    password: null,
    displayName: row.displayName,
    ...present('email', row.email),
    ...present('mobile', row.mobile),
    ...present('openId', row.openId),
    avatarUrl: row.avatarUrl,
    groupId: row.groupId,
    createDate: instant(row.createDate),
    lastResetPasswordDate: instant(row.lastResetPasswordDate),
    lastActivityDate: instant(row.lastActivityDate),
    countOfLogin: row.countOfLogin,
    countOfFailedLogin: row.countOfFailedLogin,
    countOfWriting: row.countOfWriting,
    checked: row.checked,
    locked: row.locked,
    lockedUntil: instantOrNull(row.lockedUntil),
    tokenVersion: row.tokenVersion,
    ...(avatar === undefined ? {} : { avatarPng: Buffer.from(avatar).toString('base64') }),
  };
}

export function administratorRecord(row: Administrator): Input<typeof administratorFileSchema> {
  return {
    id: row.id,
    userName: row.userName,
    password: null,
    displayName: row.displayName,
    ...present('email', row.email),
    ...present('mobile', row.mobile),
    creatorUserName: row.creatorUserName,
    creationDate: instant(row.creationDate),
    lastActivityDate: instant(row.lastActivityDate),
    countOfLogin: row.countOfLogin,
    countOfFailedLogin: row.countOfFailedLogin,
    isLockedOut: row.isLockedOut,
    siteId: row.siteId,
    departmentId: row.departmentId,
    areaId: row.areaId,
    siteIdCollection: row.siteIdCollection,
    lockedUntil: instantOrNull(row.lockedUntil),
    tokenVersion: row.tokenVersion,
  };
}

export function apiKeyRecord(row: ApiKey): Input<typeof apiKeySchema> {
  return {
    id: row.id,
    title: row.title,
    key: null,
    scopes: [...parseScopes(row.scopes)],
    expiresAt: instantOrNull(row.expiresAt),
    createdAt: instant(row.createdAt),
    lastUsedAt: instantOrNull(row.lastUsedAt),
    revokedAt: instantOrNull(row.revokedAt),
    rateLimitPerMinute: row.rateLimitPerMinute,
  };
}
