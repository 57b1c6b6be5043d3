import { filePathProblem } from '../channels/paths.ts';
import { formatDateTime, parseDateTime } from '../dates.ts';
import { readJsonObject } from '../jsonObject.ts';
import { urlProblem } from '../safeText.ts';
import { DEFAULT_CHANNEL_FILE_PATH_RULE, DEFAULT_CONTENT_FILE_PATH_RULE } from '../urls.ts';

/*
 * A site's `attributes` (docs/api/site-attributes.md). The database keeps only the keys that were set, as JSON object
 * text, so that a changed service default reaches every site that never chose its own value.
 * One table of field kinds drives the type, the reader and the validator, so they cannot drift.
 */

type Kind =
  | 'string'
  /** An address: a path on the site or an http(s) URL (the one URL rule, src/domain/safeText.ts). */
  | 'url'
  /** A path relative to the site, or a file-path rule (src/domain/channels/paths.ts). */
  | 'path'
  /** A string holding a boolean word ("True"/"False"), as the original system stores it. */
  | 'booleanWord'
  /** A string holding a whole number ("" = not set, as the original system allows). */
  | 'numberWord'
  | 'integer'
  | 'boolean'
  /** `yyyy-MM-dd HH:mm:ss`. */
  | 'dateTime'
  /** Allowed file extensions, joined by `|`. */
  | 'pipeList'
  /** Allowed file extensions, joined by `,`. */
  | 'commaList';

const KINDS = {
  charset: 'string',
  waterMarkFormatString: 'string',
  waterMarkFontName: 'string',
  waterMarkImagePath: 'path',
  separatedWebUrl: 'url',
  webUrl: 'url',
  separatedAssetsUrl: 'url',
  assetsDir: 'path',
  assetsUrl: 'url',
  channelFilePathRule: 'path',
  contentFilePathRule: 'path',
  configExportType: 'string',
  configExportPeriods: 'string',
  configExportDisplayAttributes: 'string',
  configExportIsChecked: 'string',
  configSelectImageCurrentUrl: 'url',
  configSelectVideoCurrentUrl: 'url',
  configSelectFileCurrentUrl: 'url',
  siteSettingsCollection: 'string',
  imageUploadDirectoryName: 'string',
  imageUploadDateFormatString: 'string',
  videoUploadDirectoryName: 'string',
  videoUploadDateFormatString: 'string',
  fileUploadDirectoryName: 'string',
  fileUploadDateFormatString: 'string',

  configUploadImageIsTitleImage: 'booleanWord',
  configUploadImageTitleImageWidth: 'numberWord',
  configUploadImageTitleImageHeight: 'numberWord',
  configUploadImageIsShowImageInTextEditor: 'booleanWord',
  configUploadImageIsLinkToOriginal: 'booleanWord',
  configUploadImageIsSmallImage: 'booleanWord',
  configUploadImageSmallImageWidth: 'numberWord',
  configUploadImageSmallImageHeight: 'numberWord',

  pageSize: 'integer',
  checkContentLevel: 'integer',
  autoPageWordNum: 'integer',
  photoSmallWidth: 'integer',
  photoMiddleWidth: 'integer',
  waterMarkPosition: 'integer',
  waterMarkTransparency: 'integer',
  waterMarkMinWidth: 'integer',
  waterMarkMinHeight: 'integer',
  waterMarkFontSize: 'integer',
  createStaticMaxPage: 'integer',
  configVideoContentInsertWidth: 'integer',
  configVideoContentInsertHeight: 'integer',
  imageUploadTypeMaxSize: 'integer',
  videoUploadTypeMaxSize: 'integer',
  fileUploadTypeMaxSize: 'integer',

  isCheckContentLevel: 'boolean',
  isCountDownload: 'boolean',
  isCountHits: 'boolean',
  isCountHitsByDay: 'boolean',
  isSaveImageInTextEditor: 'boolean',
  isAutoPageInTextEditor: 'boolean',
  isContentTitleBreakLine: 'boolean',
  isAutoCheckKeywords: 'boolean',
  isWaterMark: 'boolean',
  isImageWaterMark: 'boolean',
  isSeparatedWeb: 'boolean',
  isSeparatedAssets: 'boolean',
  isCreateContentIfContentChanged: 'boolean',
  isCreateChannelIfChannelChanged: 'boolean',
  isCreateShowPageInfo: 'boolean',
  isCreateIe8Compatible: 'boolean',
  isCreateBrowserNoCache: 'boolean',
  isCreateJsIgnoreError: 'boolean',
  isCreateWithJQuery: 'boolean',
  isCreateDoubleClick: 'boolean',
  isCreateStaticContentByAddDate: 'boolean',
  isCrossSiteTransChecked: 'boolean',
  configTemplateIsCodeMirror: 'boolean',
  isImageUploadChangeFileName: 'boolean',
  isVideoUploadChangeFileName: 'boolean',
  isFileUploadChangeFileName: 'boolean',

  createStaticContentAddDate: 'dateTime',

  imageUploadTypeCollection: 'pipeList',
  videoUploadTypeCollection: 'pipeList',
  fileUploadTypeCollection: 'commaList',
} as const satisfies Record<string, Kind>;

type ValueOf<K extends Kind> = K extends 'integer'
  ? number
  : K extends 'boolean'
    ? boolean
    : K extends 'booleanWord'
      ? 'True' | 'False'
      : string;

export type SiteAttributeName = keyof typeof KINDS;

/** Every attribute of a site, each with its value (stored or default). */
export type SiteAttributes = { [N in SiteAttributeName]: ValueOf<(typeof KINDS)[N]> };

export const SITE_ATTRIBUTE_NAMES = Object.keys(KINDS) as SiteAttributeName[];

export function siteAttributeKind(name: SiteAttributeName): Kind {
  return KINDS[name];
}

/** Mostly the original system's defaults, so imported sites behave as they did there. */
export const DEFAULT_SITE_ATTRIBUTES: Readonly<SiteAttributes> = Object.freeze({
  charset: 'utf-8',
  waterMarkFormatString: '',
  waterMarkFontName: '',
  waterMarkImagePath: '',
  separatedWebUrl: '',
  webUrl: '/',
  separatedAssetsUrl: '',
  assetsDir: 'upload',
  assetsUrl: '/upload',
  channelFilePathRule: DEFAULT_CHANNEL_FILE_PATH_RULE,
  contentFilePathRule: DEFAULT_CONTENT_FILE_PATH_RULE,
  configExportType: 'All',
  configExportPeriods: '0',
  configExportDisplayAttributes: '',
  configExportIsChecked: 'All',
  configSelectImageCurrentUrl: '@/upload/images',
  configSelectVideoCurrentUrl: '@/upload/videos',
  configSelectFileCurrentUrl: '@/upload/files',
  siteSettingsCollection: '',
  imageUploadDirectoryName: 'upload/images',
  imageUploadDateFormatString: 'Month',
  videoUploadDirectoryName: 'upload/videos',
  videoUploadDateFormatString: 'Month',
  fileUploadDirectoryName: 'upload/files',
  fileUploadDateFormatString: 'Month',

  configUploadImageIsTitleImage: 'True',
  configUploadImageTitleImageWidth: '300',
  configUploadImageTitleImageHeight: '',
  configUploadImageIsShowImageInTextEditor: 'True',
  configUploadImageIsLinkToOriginal: 'False',
  configUploadImageIsSmallImage: 'True',
  configUploadImageSmallImageWidth: '500',
  configUploadImageSmallImageHeight: '',

  pageSize: 30,
  checkContentLevel: 1,
  autoPageWordNum: 1500,
  photoSmallWidth: 70,
  photoMiddleWidth: 400,
  waterMarkPosition: 9,
  waterMarkTransparency: 5,
  waterMarkMinWidth: 200,
  waterMarkMinHeight: 200,
  waterMarkFontSize: 12,
  createStaticMaxPage: 10,
  configVideoContentInsertWidth: 420,
  configVideoContentInsertHeight: 280,
  imageUploadTypeMaxSize: 15360,
  videoUploadTypeMaxSize: 307200,
  fileUploadTypeMaxSize: 307200,

  isCheckContentLevel: false,
  isCountDownload: true,
  isCountHits: false,
  isCountHitsByDay: false,
  isSaveImageInTextEditor: true,
  isAutoPageInTextEditor: false,
  isContentTitleBreakLine: true,
  isAutoCheckKeywords: false,
  isWaterMark: false,
  isImageWaterMark: false,
  isSeparatedWeb: false,
  isSeparatedAssets: false,
  isCreateContentIfContentChanged: true,
  isCreateChannelIfChannelChanged: true,
  isCreateShowPageInfo: false,
  isCreateIe8Compatible: false,
  isCreateBrowserNoCache: false,
  isCreateJsIgnoreError: false,
  isCreateWithJQuery: true,
  isCreateDoubleClick: false,
  isCreateStaticContentByAddDate: false,
  isCrossSiteTransChecked: false,
  configTemplateIsCodeMirror: true,
  isImageUploadChangeFileName: true,
  isVideoUploadChangeFileName: true,
  isFileUploadChangeFileName: true,

  // Only read when isCreateStaticContentByAddDate is switched on; a fixed, valid date keeps it typed.
  createStaticContentAddDate: '2000-01-01 00:00:00',

  imageUploadTypeCollection: 'gif|jpg|jpeg|bmp|png|pneg|swf|webp',
  videoUploadTypeCollection:
    'asf|asx|avi|flv|mid|midi|mov|mp3|mp4|mpg|mpeg|ogg|ra|rm|rmb|rmvb|rp|rt|smi|swf|wav|webm|wma|wmv',
  fileUploadTypeCollection: 'zip,rar,7z,js,css,txt,doc,docx,ppt,pptx,xls,xlsx,pdf',
});

/** Inclusive bounds for integers that have a meaningful range; every other integer must be >= 0. */
const INTEGER_RANGES: Partial<Record<SiteAttributeName, readonly [number, number]>> = {
  pageSize: [1, 1000],
  checkContentLevel: [1, 5],
  waterMarkPosition: [1, 9],
  waterMarkTransparency: [0, 10],
};

const BOOLEAN_WORD = /^(true|false)$/i;
const NUMBER_WORD = /^(\d+)?$/;
const EXTENSION_LIST_ITEM = /^[A-Za-z0-9]+$/;

/** Why `value` is not a valid value of attribute `name`, or undefined when it is. */
function problemOf(name: SiteAttributeName, value: unknown): string | undefined {
  const kind = KINDS[name];
  switch (kind) {
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be an integer';
      const [min, max] = INTEGER_RANGES[name] ?? [0, Number.MAX_SAFE_INTEGER];
      return value < min || value > max ? `must be between ${min} and ${max}` : undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be a boolean';
    default:
      break;
  }
  if (typeof value !== 'string') return 'must be a string';
  switch (kind) {
    case 'url':
      return urlProblem(value);
    case 'path':
      return filePathProblem(value);
    case 'booleanWord':
      return BOOLEAN_WORD.test(value) ? undefined : 'must be a string holding "True" or "False"';
    case 'numberWord':
      return NUMBER_WORD.test(value) ? undefined : 'must be a string holding a whole number';
    case 'dateTime':
      return parseDateTime(value) ? undefined : 'must be a date-time string yyyy-MM-dd HH:mm:ss';
    case 'pipeList':
    case 'commaList': {
      const separator = kind === 'pipeList' ? '|' : ',';
      const valid =
        value === '' || value.split(separator).every((item) => EXTENSION_LIST_ITEM.test(item.trim()));
      return valid ? undefined : `must be file extensions separated by '${separator}'`;
    }
    default:
      return undefined;
  }
}

function normalise(name: SiteAttributeName, value: string | number | boolean): string | number | boolean {
  if (KINDS[name] === 'dateTime' && typeof value === 'string') {
    const date = parseDateTime(value);
    return date ? formatDateTime(date) : value;
  }
  return value;
}

function isSiteAttributeName(key: string): key is SiteAttributeName {
  return Object.hasOwn(KINDS, key);
}

/** Boolean words are read in any case and answered as the original writes them: "True"/"False". */
function canonical(name: SiteAttributeName, value: unknown): unknown {
  if (KINDS[name] !== 'booleanWord') return value;
  return String(value).toLowerCase() === 'true' ? 'True' : 'False';
}

/**
 * The attributes of a site from its stored JSON text, over the defaults. Stored values that are
 * missing, unknown or of the wrong kind fall back to the default: a read must never fail because
 * of one odd value written by an older version.
 */
export function readSiteAttributes(json: string): SiteAttributes {
  const attributes: Record<string, unknown> = { ...DEFAULT_SITE_ATTRIBUTES };
  for (const [key, value] of Object.entries(readJsonObject(json))) {
    if (isSiteAttributeName(key) && problemOf(key, value) === undefined)
      attributes[key] = canonical(key, value);
  }
  return attributes as SiteAttributes;
}

export type SiteAttributesValidation =
  | { ok: true; value: Partial<SiteAttributes> }
  | { ok: false; errors: { path: string; message: string }[] };

/**
 * Check attributes given by a caller (import, site update): an object whose keys are attribute
 * names with values of their kind. Absent keys are fine (they keep their default). Each error's
 * path is the attribute name. Date-times come back in the canonical `yyyy-MM-dd HH:mm:ss` form.
 */
export function validateSiteAttributes(input: unknown): SiteAttributesValidation {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, errors: [{ path: '', message: 'attributes must be an object' }] };
  }
  const value: Record<string, unknown> = {};
  const errors: { path: string; message: string }[] = [];
  for (const [key, item] of Object.entries(input)) {
    if (!isSiteAttributeName(key)) {
      errors.push({ path: key, message: `unknown attribute '${key}'` });
      continue;
    }
    const problem = problemOf(key, item);
    if (problem) errors.push({ path: key, message: `attribute '${key}' ${problem}` });
    else value[key] = normalise(key, item as string | number | boolean);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: value as Partial<SiteAttributes> };
}
