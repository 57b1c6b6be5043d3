import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { UNIQUE_ACCOUNT_FIELDS } from '../../src/domain/accounts/rules.ts';
import { CONTENT_COLUMN_NAMES, contentColumn } from '../../src/domain/contents/columns.ts';
import { HANDLED_UPDATE_FIELDS } from '../../src/domain/contents/update.ts';
import { schemaProperties } from '../../src/domain/contractSchemas.ts';
import {
  administratorSchema,
  CHANNEL_EXTRA_NAMES,
  channelSchema,
  contentSchema,
  IGNORED_FIELDS,
  siteSchema,
  userSchema,
} from '../../src/domain/import/records.ts';

/*
 * A record's fields are written by hand once; where two hand-written lists of the same record
 * remain (the model, the contract's schemas, the import's record schemas, the update's field
 * lists), they must agree. Each test names the lists it compares.
 */

interface ModelField {
  type: string;
  nullable: boolean;
  unique: boolean;
  /** The value of a literal `@default(...)` (not `now()` or `autoincrement()`). */
  default?: string | number | boolean;
}

function literal(text: string | undefined): ModelField['default'] {
  if (text === undefined) return undefined;
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^-?\d+$/.test(text)) return Number(text);
  return text.startsWith('"') ? (JSON.parse(text) as string) : undefined;
}

/** The scalar fields of a model of prisma/schema.prisma, as written there. */
function modelFields(model: string): Map<string, ModelField> {
  const schema = readFileSync(new URL('../../prisma/schema.prisma', import.meta.url), 'utf8');
  const body = new RegExp(`^model ${model} \\{\\n([\\s\\S]*?)^\\}`, 'm').exec(schema)?.[1];
  if (!body) throw new Error(`prisma/schema.prisma has no model ${model}`);
  const fields = new Map<string, ModelField>();
  for (const line of body.split('\n')) {
    const match = /^\s+(\w+)\s+(Int|String|Boolean|DateTime)(\?)?(.*)$/.exec(line);
    if (match) {
      fields.set(match[1] as string, {
        type: match[2] as string,
        nullable: match[3] === '?',
        unique: /@unique|@id/.test(match[4] as string),
        default: literal(/@default\(("[^"]*"|[^()]*)\)/.exec(match[4] as string)?.[1]),
      });
    }
  }
  return fields;
}

const properties = (...schemas: string[]) =>
  new Set(schemas.flatMap((name) => [...schemaProperties(name).keys()]));
const KINDS_OF_MODEL_TYPE: Record<string, string[]> = {
  Int: ['integer'],
  Boolean: ['boolean'],
  DateTime: ['date'],
  String: ['text', 'list'],
};

describe('contents', () => {
  test('the column catalogue (from the contract) agrees with the model on type and nullability', () => {
    const model = modelFields('Content');
    const disagreements = CONTENT_COLUMN_NAMES.flatMap((name) => {
      const column = contentColumn(name);
      const field = model.get(column?.column ?? '');
      if (!column || !field) return [`${name}: no column`];
      const kinds = KINDS_OF_MODEL_TYPE[field.type] ?? [];
      return [
        ...(kinds.includes(column.kind) ? [] : [`${name}: kind ${column.kind}, model type ${field.type}`]),
        ...(column.nullable === field.nullable
          ? []
          : [`${name}: nullable ${column.nullable} in the catalogue`]),
      ];
    });
    expect(disagreements).toEqual([]);
  });

  test('every field of form A and of the update body that names a column can be filtered by', () => {
    const model = modelFields('Content');
    const columnFields = [...properties('Content', 'UpdateContentRequest')].filter(
      (field) => model.has(field) || field === 'content',
    );
    expect([...CONTENT_COLUMN_NAMES].sort()).toEqual(columnFields.sort());
  });

  test('the update reads every field of its body the contract does not call ignored', () => {
    const body = schemaProperties('UpdateContentRequest');
    const ignored = [...body]
      .filter(([, schema]) => schema.description?.startsWith('Ignored'))
      .map(([f]) => f);
    expect(ignored.filter((field) => (HANDLED_UPDATE_FIELDS as readonly string[]).includes(field))).toEqual(
      [],
    );
    expect([...HANDLED_UPDATE_FIELDS, ...ignored].sort()).toEqual([...body.keys()].sort());
  });

  test('the import takes the fields of form A and of the update body', () => {
    // The update body's isChecked is the original system's word for `checked`, which the import takes.
    const api = [...properties('Content', 'UpdateContentRequest')].filter((field) => field !== 'isChecked');
    expect(Object.keys(contentSchema.shape).sort()).toEqual(api.sort());
  });
});

describe('sites and channels', () => {
  test('the import takes the fields of the contract Site', () => {
    expect(Object.keys(siteSchema.shape).sort()).toEqual([...properties('Site')].sort());
  });

  test('the import takes form A of a channel (and its child) and the extras of form B', () => {
    const taken = new Set([...Object.keys(channelSchema.shape), ...IGNORED_FIELDS.channels]);
    expect([...properties('Channel', 'ChannelChild')].filter((field) => !taken.has(field))).toEqual([]);
    const formB = properties('ChannelFormB', 'ChannelFormBAttributes');
    expect(
      [...taken].filter((field) => !properties('Channel', 'ChannelChild').has(field) && !formB.has(field)),
    ).toEqual([]);
    const formA = properties('Channel');
    expect(CHANNEL_EXTRA_NAMES.filter((name) => !formA.has(name) && !formB.has(name))).toEqual([]);
  });

  test('a channel child is the channel fields and its own, composed in the contract', () => {
    const fields = properties('ChannelFields');
    expect([...properties('Channel')].filter((field) => !fields.has(field))).toEqual(['children']);
    expect([...properties('ChannelChild')].filter((field) => !fields.has(field))).toEqual([
      'value',
      'label',
      'children',
    ]);
  });
});

describe('defaults', () => {
  test("a field the import file leaves out takes the model's default", () => {
    const minimal = [
      ['Site', siteSchema, { siteDir: 'd', siteName: 'n' }],
      ['Channel', channelSchema, { siteId: 1, channelName: 'c' }],
      ['Content', contentSchema, { channelId: 1 }],
      ['User', userSchema, { userName: 'u', password: 'abc123' }],
      ['Administrator', administratorSchema, { userName: 'a', password: 'abc123' }],
    ] as const;
    for (const [model, schema, record] of minimal) {
      const fields = modelFields(model);
      const parsed: Record<string, unknown> = schema.parse(record);
      const disagreements = Object.entries(parsed).flatMap(([name, value]) => {
        const expected = fields.get(name)?.default;
        return expected === undefined || name in record || value === expected
          ? []
          : [`${model}.${name}: import ${JSON.stringify(value)}, model ${JSON.stringify(expected)}`];
      });
      expect(disagreements).toEqual([]);
    }
  });
});

describe('accounts', () => {
  test('the import takes the fields of the contract User and create-user body', () => {
    const taken = [...Object.keys(userSchema.shape), ...IGNORED_FIELDS.users];
    expect(taken.sort()).toEqual([...properties('User', 'CreateUserRequest')].sort());
  });

  test('the import takes the fields of the contract Administrator', () => {
    const taken = [...Object.keys(administratorSchema.shape), ...IGNORED_FIELDS.administrators];
    expect(taken.sort()).toEqual([...properties('Administrator')].sort());
  });

  test('every identifying account field is unique in the model', () => {
    for (const [kind, model] of [
      ['users', 'User'],
      ['administrators', 'Administrator'],
    ] as const) {
      const fields = modelFields(model);
      const unique = [...fields]
        .filter(([name, field]) => field.unique && name !== 'id')
        .map(([name]) => name);
      expect([...UNIQUE_ACCOUNT_FIELDS[kind]].sort()).toEqual(unique.sort());
    }
  });
});
