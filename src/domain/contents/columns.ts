import { type Content, MODEL_FIELDS } from '../../db/models.ts';
import { type FieldKind, fieldKind, schemaProperties } from '../contractSchemas.ts';

/*
 * The content fields a list request may filter (`wheres`) and sort (`orders`) by: the fields of the
 * content record as form A names them, plus the stored fields only the update body names. Nothing
 * here lists them: the names and kinds come from the contract's Content and UpdateContentRequest
 * schemas, the columns from the model. A field is a column when the model has a column of its
 * name (or of the name CONTENT_FIELD_COLUMNS gives); the kind decides how a `value` string is read.
 */

export type ColumnKind = Exclude<FieldKind, 'other'>;

export interface ContentColumn {
  /** Column of the Content table. */
  column: keyof Content;
  kind: ColumnKind;
  /** The column may hold NULL: negative operators must then keep the NULL rows. */
  nullable: boolean;
}

/** The API fields whose column has another name: form A's `content` is the stored `body`. */
export const CONTENT_FIELD_COLUMNS: Readonly<Record<string, keyof Content>> = { content: 'body' };

type NullableColumn = { [K in keyof Content]: null extends Content[K] ? K : never }[keyof Content];
/** The model's nullable columns; the compiler refuses a list that misses one or names another. */
const NULLABLE_COLUMNS = [
  'linkUrl',
  'lastHitsDate',
  'recycledDate',
] as const satisfies readonly NullableColumn[];
type Unlisted = Exclude<NullableColumn, (typeof NULLABLE_COLUMNS)[number]>;
const everyNullableListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyNullableListed;

const MODEL_COLUMNS = new Set<string>(MODEL_FIELDS.Content);

/** The columns a hit changes (src/domain/contents/hits.ts), besides the row's version. */
export const HIT_COLUMNS = [
  'hits',
  'hitsByDay',
  'hitsByWeek',
  'hitsByMonth',
  'lastHitsDate',
] as const satisfies readonly (keyof Content)[];

export const isHitColumn = (column: string | undefined): boolean =>
  (HIT_COLUMNS as readonly (string | undefined)[]).includes(column);

function buildCatalogue(): ReadonlyMap<string, ContentColumn> {
  const catalogue = new Map<string, ContentColumn>();
  // Form A first: its types are the record's (the update body types some ignored fields loosely).
  for (const schema of ['Content', 'UpdateContentRequest']) {
    for (const [field, property] of schemaProperties(schema)) {
      const column = CONTENT_FIELD_COLUMNS[field] ?? field;
      if (catalogue.has(field) || !MODEL_COLUMNS.has(column)) continue;
      const kind = fieldKind(property);
      if (kind === 'other') throw new Error(`${schema}.${field}: no column kind for its schema`);
      const nullable = (NULLABLE_COLUMNS as readonly string[]).includes(column);
      catalogue.set(field, { column: column as keyof Content, kind, nullable });
    }
  }
  return catalogue;
}

const CATALOGUE = buildCatalogue();

export const CONTENT_COLUMN_NAMES: readonly string[] = [...CATALOGUE.keys()];

export function contentColumn(name: string): ContentColumn | undefined {
  return CATALOGUE.get(name);
}
