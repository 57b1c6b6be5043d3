import { keptByText } from '../../db/keptStatements.ts';
import { type Content, MODEL_FIELDS } from '../../db/models.ts';
import { objectMaker } from '../../objectLiterals.ts';
import { contractSchema } from '../contractSchemas.ts';
import { invalidFields } from '../errors.ts';
import { CONTENT_FIELD_COLUMNS } from './columns.ts';
import {
  CONTENT_FORM_A_VALUES,
  CONTENT_FORM_B_COLUMNS,
  CONTENT_FORM_B_VALUES,
  type ContentFormA,
  type ContentFormB,
} from './forms.ts';

/*
 * Field selection (`fields`): a content answered with only some fields of its form, read from
 * only the columns those fields are made of. The names a form admits are the contract's
 * (ContentFieldName, ContentFormBFieldName: `npm run gen` checks them against the record schemas),
 * and a selection answers them in the form's order, whatever order they were asked in.
 */

/** The columns every selected read takes besides its fields': the id, and the version (ETags, and the piecewise read of long texts). */
const ALWAYS: readonly (keyof Content)[] = ['id', 'version'];

interface Form<F> {
  /** The contract's name of the record, for messages. */
  record: string;
  names: readonly (keyof F & string)[];
  values: { readonly [Field in keyof F]-?: (row: Content) => F[Field] };
  columns: ReadonlyMap<string, readonly (keyof Content)[]>;
}

const MODEL_COLUMNS = new Set<string>(MODEL_FIELDS.Content);

function formOf<F>(
  record: string,
  namesSchema: string,
  values: Form<F>['values'],
  renamed: Partial<Record<string, readonly (keyof Content)[]>>,
): Form<F> {
  const names = contractSchema(namesSchema).enum as (keyof F & string)[];
  const columns = new Map<string, readonly (keyof Content)[]>();
  for (const name of names) {
    if (!(name in values)) throw new Error(`${namesSchema}: no value is made for ${name}`);
    const read = renamed[name] ?? [name as keyof Content];
    const unknown = read.filter((column) => !MODEL_COLUMNS.has(column));
    if (unknown.length > 0)
      throw new Error(`${record}.${name}: the model has no column ${unknown.join(', ')}`);
    columns.set(name, read);
  }
  return { record, names, values, columns };
}

const FORM_A = formOf<ContentFormA>(
  'Content',
  'ContentFieldName',
  CONTENT_FORM_A_VALUES,
  Object.fromEntries(Object.entries(CONTENT_FIELD_COLUMNS).map(([field, column]) => [field, [column]])),
);
const FORM_B = formOf<ContentFormB>(
  'ContentFormB',
  'ContentFormBFieldName',
  CONTENT_FORM_B_VALUES,
  CONTENT_FORM_B_COLUMNS,
);

/** Some fields of a form, and what reading and answering them takes. */
export interface FieldSelection<F> {
  form: Form<F>;
  /** The fields, in the form's order, each once. */
  fields: readonly (keyof F & string)[];
  /** The columns to read, in the model's order: the fields' and ALWAYS. */
  columns: readonly (keyof Content)[];
  /** The fields as a bit set over the form's names, in hex: what tells two selections apart in an ETag. */
  key: string;
  /** A row's answer: the fields made from the selected columns, as one object literal. */
  answerOf: (row: Content) => Partial<F>;
}

/** The most wrong names one answer tells. */
const MAX_PROBLEMS = 5;

function selectionOf<F>(form: Form<F>, asked: readonly string[], where: string): FieldSelection<F> {
  const wanted = new Set<string>();
  const problems = [];
  for (const [index, raw] of asked.entries()) {
    const name = raw.trim();
    if (name === '') problems.push({ field: where, message: `has an empty name at position ${index + 1}` });
    else if (!form.columns.has(name))
      problems.push({
        field: where,
        message: `names '${name}', which is not a field of ${form.record} (its fields: ${form.names.join(', ')})`,
      });
    else wanted.add(name);
  }
  // A long list of wrong names is told by its first few: each message lists the form's fields.
  if (problems.length > 0) throw invalidFields(problems.slice(0, MAX_PROBLEMS));
  const fields = form.names.filter((name) => wanted.has(name));
  const read = new Set<string>(ALWAYS);
  let bits = 0n;
  for (const [index, name] of form.names.entries()) {
    if (!wanted.has(name)) continue;
    bits |= 1n << BigInt(index);
    for (const column of form.columns.get(name) ?? []) read.add(column);
  }
  return {
    form,
    fields,
    columns: MODEL_FIELDS.Content.filter((column) => read.has(column)),
    key: bits.toString(16),
    answerOf: objectMaker(
      fields,
      (index) => `parts[${index}](input)`,
      fields.map((field) => form.values[field]),
    ),
  };
}

/** Selections asked for lately, kept by how they were asked: the same few are asked again and again. */
const KEPT_SELECTIONS = 256;

/**
 * The selection of a form that `asked` names, made once per way of asking it (a list's array, or a
 * query parameter's comma-separated text, each keyed apart) and kept; a list that names no field
 * of the form throws every time and is never kept.
 */
function keptSelections<F>(form: Form<F>): (asked: readonly string[] | string) => FieldSelection<F> {
  const kept = keptByText((key) => {
    const names = key.startsWith('text:') ? key.slice(5).split(',') : (JSON.parse(key.slice(5)) as string[]);
    return selectionOf(form, names, 'fields');
  }, KEPT_SELECTIONS);
  return (asked) => kept(typeof asked === 'string' ? `text:${asked}` : `list:${JSON.stringify(asked)}`);
}

const FORM_A_SELECTION = keptSelections(FORM_A);
const FORM_B_SELECTION = keptSelections(FORM_B);

/**
 * The form A selection `fields` names: a list's array (whose names the contract has checked), or a
 * query parameter's comma-separated text; undefined without `fields`.
 */
export function formASelection(
  asked: readonly string[] | string | undefined,
): FieldSelection<ContentFormA> | undefined {
  return asked === undefined ? undefined : FORM_A_SELECTION(asked);
}

/** The form B selection a template-tag read's `fields` names; undefined without it. */
export function formBSelection(asked: string | undefined): FieldSelection<ContentFormB> | undefined {
  return asked === undefined ? undefined : FORM_B_SELECTION(asked);
}

/** A row's selected fields, made from the selected columns only. */
export function selectFields<F>(row: Content, selection: FieldSelection<F>): Partial<F> {
  return selection.answerOf(row);
}

/** Prisma's `select` of a selection's columns (and of any more the caller needs). */
export function prismaSelect(
  selection: { columns: readonly (keyof Content)[] },
  more: readonly (keyof Content)[] = [],
): Partial<Record<keyof Content, true>> {
  return Object.fromEntries([...selection.columns, ...more].map((column) => [column, true]));
}
