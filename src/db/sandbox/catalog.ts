/*
 * The public views of stl/sqlContents: the only relations a sandboxed query may name. They are made
 * by the migration `stl_sql_views` of each provider, shaped like the original system's tables. On
 * PostgreSQL their names and columns are unquoted, hence lower case, so that SQL written for the
 * original (which ignores case) keeps working; keys of result rows are mapped back to the camelCase
 * names listed here. Keep this list and the two migrations in step.
 */

export const PUBLIC_VIEWS = {
  siteserver_Site: ['id', 'siteName', 'siteDir', 'tableName', 'isRoot', 'parentId', 'taxis', 'settingsXml'],
  siteserver_Channel: [
    'id',
    'channelName',
    'siteId',
    'contentModelPluginId',
    'contentRelatedPluginIds',
    'parentId',
    'parentsPath',
    'parentsCount',
    'childrenCount',
    'indexName',
    'groupNameCollection',
    'taxis',
    'addDate',
    'imageUrl',
    'content',
    'filePath',
    'channelFilePathRule',
    'contentFilePathRule',
    'linkUrl',
    'linkType',
    'channelTemplateId',
    'contentTemplateId',
    'keywords',
    'description',
  ],
  siteserver_Content: [
    'id',
    'channelId',
    'siteId',
    'addUserName',
    'lastEditUserName',
    'lastEditDate',
    'addDate',
    'taxis',
    'groupNameCollection',
    'tags',
    'sourceId',
    'referenceId',
    'checkedLevel',
    'hits',
    'isChecked',
    'isTop',
    'isRecommend',
    'isHot',
    'isColor',
    'title',
    'subTitle',
    'imageUrl',
    'videoUrl',
    'fileUrl',
    'linkUrl',
    'content',
    'summary',
    'author',
    'source',
  ],
} as const satisfies Record<string, readonly string[]>;

export type PublicView = keyof typeof PUBLIC_VIEWS;

export const PUBLIC_VIEW_NAMES = Object.keys(PUBLIC_VIEWS) as PublicView[];

/** Relation names a query may read, in lower case (names are compared without regard to case). */
export const ALLOWED_RELATIONS: ReadonlySet<string> = new Set(
  PUBLIC_VIEW_NAMES.map((name) => name.toLowerCase()),
);

/** lower-case column name → its camelCase spelling, over every view. */
const CAMEL_CASE: ReadonlyMap<string, string> = new Map(
  Object.values(PUBLIC_VIEWS)
    .flat()
    .map((column) => [column.toLowerCase(), column]),
);

/**
 * The key of a result column: a view column's camelCase name whatever case the query or the
 * database gave it; any other name (an alias, an expression) in lower case, which is what
 * PostgreSQL makes of an unquoted name, so that both databases answer the same keys.
 */
export function rowKey(columnName: string): string {
  const lower = columnName.toLowerCase();
  return CAMEL_CASE.get(lower) ?? lower;
}
