import type { Content } from '../../db/models.ts';
import type { components } from '../../generated/openapi.ts';
import { formatDateTime } from '../dates.ts';
import { readJsonObject } from '../jsonObject.ts';
import { splitList } from '../lists.ts';
import { storedCheckedLevel } from './review.ts';

/*
 * The two shapes of a content record in the contract. Form A (get, update, list) is the record
 * itself. Form B (template-tag reads, delete) is the original system's view of the same record:
 * flags as isX booleans, lists comma-joined, and the extended attributes folded into settingsXml.
 * The delete response renders the booleans as "True"/"False" and settingsXml as a JSON object text.
 */

export type ContentFormA = components['schemas']['Content'];
export type ContentFormB = components['schemas']['ContentFormB'];
export type ContentFormBDeleted = components['schemas']['ContentFormBDeleted'];
/** The fields both form B views share (the contract composes both from them). */
type ContentFormBFields = components['schemas']['ContentFormBFields'];

export function toContentFormA(row: Content): ContentFormA {
  return {
    id: row.id,
    guid: row.guid,
    siteId: row.siteId,
    channelId: row.channelId,
    adminId: row.adminId,
    lastEditAdminId: row.lastEditAdminId,
    userId: row.userId,
    taxis: row.taxis,
    groupNames: splitList(row.groupNames),
    tagNames: splitList(row.tagNames),
    sourceId: row.sourceId,
    referenceId: row.referenceId,
    templateId: row.templateId,
    checked: row.checked,
    checkedLevel: storedCheckedLevel(row.checkedLevel),
    hits: row.hits,
    downloads: row.downloads,
    imageUrlCount: row.imageUrlCount,
    videoUrlCount: row.videoUrlCount,
    fileUrlCount: row.fileUrlCount,
    content: row.body,
    title: row.title,
    subTitle: row.subTitle,
    imageUrl: row.imageUrl,
    videoUrl: row.videoUrl,
    fileUrl: row.fileUrl,
    body: row.body,
    summary: row.summary,
    author: row.author,
    source: row.source,
    top: row.top,
    recommend: row.recommend,
    hot: row.hot,
    color: row.color,
    linkType: row.linkType,
    linkUrl: row.linkUrl,
    addDate: formatDateTime(row.addDate),
    createdDate: formatDateTime(row.createdDate),
    lastModifiedDate: formatDateTime(row.lastModifiedDate),
  };
}

/**
 * The extended attributes of the original system's settingsXml: the text fields form B does not
 * carry as keys of its own, then any stored extra settings. Empty values are left out.
 */
export function extendedAttributes(row: Content): [string, string][] {
  const named: [string, string][] = [
    ['subTitle', row.subTitle],
    ['imageUrl', row.imageUrl],
    ['videoUrl', row.videoUrl],
    ['fileUrl', row.fileUrl],
    ['summary', row.summary],
    ['author', row.author],
    ['source', row.source],
  ];
  const extra = Object.entries(readJsonObject(row.settings)).map(([key, value]): [string, string] => [
    key,
    typeof value === 'string' ? value : JSON.stringify(value),
  ]);
  return [...named, ...extra].filter(([, value]) => value !== '');
}

/** `key=value` pairs joined with `&`, values URL-encoded so that `&` and `=` inside them survive. */
export function settingsQueryText(pairs: [string, string][]): string {
  return pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&');
}

const trueFalse = (value: boolean): 'True' | 'False' => (value ? 'True' : 'False');

function formBBase(row: Content): ContentFormBFields {
  return {
    id: row.id,
    channelId: row.channelId,
    siteId: row.siteId,
    addUserName: row.addUserName,
    lastEditUserName: row.lastEditUserName,
    writingUserName: row.writingUserName,
    lastEditDate: formatDateTime(row.lastEditDate),
    addDate: formatDateTime(row.addDate),
    taxis: row.taxis,
    groupNameCollection: splitList(row.groupNames).join(','),
    tags: splitList(row.tagNames).join(','),
    sourceId: row.sourceId,
    referenceId: row.referenceId,
    checkedLevel: storedCheckedLevel(row.checkedLevel),
    hits: row.hits,
    title: row.title,
    linkUrl: row.linkUrl ?? '',
  };
}

/*
 * The two form B records add their own fields to formBBase's object with Object.assign: a spread of
 * it into a new literal cost a page of 30 five times as much (V8 copies a spread property by
 * property into an object that changes shape as it grows).
 */

export function toContentFormB(row: Content): ContentFormB {
  return Object.assign(formBBase(row), {
    isChecked: row.checked,
    isTop: row.top,
    isRecommend: row.recommend,
    isHot: row.hot,
    isColor: row.color,
    settingsXml: settingsQueryText(extendedAttributes(row)),
  });
}

export function toContentFormBDeleted(row: Content, navigationUrl: string): ContentFormBDeleted {
  return Object.assign(formBBase(row), {
    isChecked: trueFalse(row.checked),
    isTop: trueFalse(row.top),
    isRecommend: trueFalse(row.recommend),
    isHot: trueFalse(row.hot),
    isColor: trueFalse(row.color),
    settingsXml: JSON.stringify(Object.fromEntries(extendedAttributes(row))),
    subTitle: row.subTitle,
    imageUrl: row.imageUrl,
    videoUrl: row.videoUrl,
    fileUrl: row.fileUrl,
    content: row.body,
    summary: row.summary,
    author: row.author,
    source: row.source,
    navigationUrl,
  });
}

/*
 * Selected fields (`fields`): each field of a form made on its own, from the columns it needs
 * only. The tables give every field of the form (the compiler refuses one that misses a field or
 * types one wrongly) and make each value as toContentFormA / toContentFormB do, which
 * test/contents/fields.test.ts checks field by field on every demo content.
 */

type FieldValues<Form> = { readonly [Field in keyof Form]-?: (row: Content) => Form[Field] };

/** Fields that are their column as stored. */
function asStored<K extends keyof Content>(
  ...columns: K[]
): { [Column in K]: (row: Content) => Content[Column] } {
  return Object.fromEntries(columns.map((column) => [column, (row: Content) => row[column]])) as {
    [Column in K]: (row: Content) => Content[Column];
  };
}

export const CONTENT_FORM_A_VALUES: FieldValues<ContentFormA> = {
  ...asStored('id', 'guid', 'siteId', 'channelId', 'adminId', 'lastEditAdminId', 'userId', 'taxis'),
  ...asStored('sourceId', 'referenceId', 'templateId', 'checked', 'hits', 'downloads'),
  ...asStored('imageUrlCount', 'videoUrlCount', 'fileUrlCount', 'title', 'subTitle', 'imageUrl'),
  ...asStored('videoUrl', 'fileUrl', 'body', 'summary', 'author', 'source', 'top', 'recommend'),
  ...asStored('hot', 'color', 'linkType', 'linkUrl'),
  groupNames: (row) => splitList(row.groupNames),
  tagNames: (row) => splitList(row.tagNames),
  checkedLevel: (row) => storedCheckedLevel(row.checkedLevel),
  content: (row) => row.body,
  addDate: (row) => formatDateTime(row.addDate),
  createdDate: (row) => formatDateTime(row.createdDate),
  lastModifiedDate: (row) => formatDateTime(row.lastModifiedDate),
};

export const CONTENT_FORM_B_VALUES: FieldValues<ContentFormB> = {
  ...asStored('id', 'channelId', 'siteId', 'addUserName', 'lastEditUserName', 'writingUserName'),
  ...asStored('taxis', 'sourceId', 'referenceId', 'hits', 'title'),
  lastEditDate: (row) => formatDateTime(row.lastEditDate),
  addDate: (row) => formatDateTime(row.addDate),
  groupNameCollection: (row) => splitList(row.groupNames).join(','),
  tags: (row) => splitList(row.tagNames).join(','),
  checkedLevel: (row) => storedCheckedLevel(row.checkedLevel),
  linkUrl: (row) => row.linkUrl ?? '',
  isChecked: (row) => row.checked,
  isTop: (row) => row.top,
  isRecommend: (row) => row.recommend,
  isHot: (row) => row.hot,
  isColor: (row) => row.color,
  settingsXml: (row) => settingsQueryText(extendedAttributes(row)),
};

/**
 * The columns a form B field is made of, where they are not the one column of its name: the
 * renamed flags and lists, and `settingsXml`, made of the text fields form B has no key for and
 * the extra settings (extendedAttributes). Form A's are in columns.ts (CONTENT_FIELD_COLUMNS).
 */
export const CONTENT_FORM_B_COLUMNS: Partial<Record<keyof ContentFormB, readonly (keyof Content)[]>> = {
  groupNameCollection: ['groupNames'],
  tags: ['tagNames'],
  isChecked: ['checked'],
  isTop: ['top'],
  isRecommend: ['recommend'],
  isHot: ['hot'],
  isColor: ['color'],
  settingsXml: ['subTitle', 'imageUrl', 'videoUrl', 'fileUrl', 'summary', 'author', 'source', 'settings'],
};
