/*
 * The content fields a list request may filter (`wheres`) and sort (`orders`) by: the fields of the
 * content record as form A names them, plus the stored fields only the update body names. Each maps
 * to a column of the Content table and a kind that decides how a `value` string is read.
 */

export type ColumnKind = 'integer' | 'boolean' | 'date' | 'text' | 'list';

export interface ContentColumn {
  /** Column of the Content table. */
  column: string;
  kind: ColumnKind;
  /** The column may hold NULL: negative operators must then keep the NULL rows. */
  nullable: boolean;
}

const integer = (column: string): ContentColumn => ({ column, kind: 'integer', nullable: false });
const boolean = (column: string): ContentColumn => ({ column, kind: 'boolean', nullable: false });
const date = (column: string, nullable = false): ContentColumn => ({ column, kind: 'date', nullable });
const text = (column: string, nullable = false): ContentColumn => ({ column, kind: 'text', nullable });
const list = (column: string): ContentColumn => ({ column, kind: 'list', nullable: false });

const CATALOGUE: Record<string, ContentColumn> = {
  id: integer('id'),
  guid: text('guid'),
  siteId: integer('siteId'),
  channelId: integer('channelId'),
  adminId: integer('adminId'),
  lastEditAdminId: integer('lastEditAdminId'),
  userId: integer('userId'),
  taxis: integer('taxis'),
  groupNames: list('groupNames'),
  tagNames: list('tagNames'),
  sourceId: integer('sourceId'),
  referenceId: integer('referenceId'),
  templateId: integer('templateId'),
  checked: boolean('checked'),
  checkedLevel: integer('checkedLevel'),
  hits: integer('hits'),
  hitsByDay: integer('hitsByDay'),
  hitsByWeek: integer('hitsByWeek'),
  hitsByMonth: integer('hitsByMonth'),
  downloads: integer('downloads'),
  imageUrlCount: integer('imageUrlCount'),
  videoUrlCount: integer('videoUrlCount'),
  fileUrlCount: integer('fileUrlCount'),
  content: text('body'),
  body: text('body'),
  title: text('title'),
  subTitle: text('subTitle'),
  imageUrl: text('imageUrl'),
  videoUrl: text('videoUrl'),
  fileUrl: text('fileUrl'),
  summary: text('summary'),
  author: text('author'),
  source: text('source'),
  top: boolean('top'),
  recommend: boolean('recommend'),
  hot: boolean('hot'),
  color: boolean('color'),
  linkType: text('linkType'),
  linkUrl: text('linkUrl', true),
  addUserName: text('addUserName'),
  lastEditUserName: text('lastEditUserName'),
  writingUserName: text('writingUserName'),
  addDate: date('addDate'),
  createdDate: date('createdDate'),
  lastModifiedDate: date('lastModifiedDate'),
  lastEditDate: date('lastEditDate'),
  lastHitsDate: date('lastHitsDate', true),
};

export const CONTENT_COLUMN_NAMES: readonly string[] = Object.keys(CATALOGUE);

export function contentColumn(name: string): ContentColumn | undefined {
  return Object.hasOwn(CATALOGUE, name) ? CATALOGUE[name] : undefined;
}
