import { contract } from '../contract.ts';

/*
 * The record schemas of the contract (openapi/cms.yaml), read at run time so that domain code
 * derives field lists from them instead of restating them: which fields a record has and what
 * kind of value each holds. Only the contract's own shapes are understood: `properties`, local
 * `$ref`s and `allOf` composition.
 */

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  [keyword: string]: unknown;
};

const PREFIX = '#/components/schemas/';

function components(): Record<string, JsonSchema> {
  const document = contract.document as { components?: { schemas?: Record<string, JsonSchema> } };
  return document.components?.schemas ?? {};
}

/** A named schema of the contract's components; throws when the contract has none of that name. */
export function contractSchema(name: string): JsonSchema {
  const schema = components()[name];
  if (!schema) throw new Error(`openapi/cms.yaml has no schema ${name}`);
  return schema;
}

function resolve(schema: JsonSchema): JsonSchema {
  return schema.$ref?.startsWith(PREFIX) ? resolve(contractSchema(schema.$ref.slice(PREFIX.length))) : schema;
}

/** The name of the schema a `$ref` points at, if the schema is one. */
export function refName(schema: JsonSchema): string | undefined {
  return schema.$ref?.startsWith(PREFIX) ? schema.$ref.slice(PREFIX.length) : undefined;
}

/** Every property of a schema, including those it takes in by `allOf`, in the contract's order. */
export function schemaProperties(name: string): Map<string, JsonSchema> {
  const collected = new Map<string, JsonSchema>();
  const visit = (schema: JsonSchema) => {
    const resolved = resolve(schema);
    for (const part of resolved.allOf ?? []) visit(part);
    for (const [field, property] of Object.entries(resolved.properties ?? {})) collected.set(field, property);
  };
  visit(contractSchema(name));
  return collected;
}

export type FieldKind = 'integer' | 'boolean' | 'date' | 'text' | 'list' | 'other';

/** What a field holds: a DateTime is a date, an array (or a NameList) of strings a list. */
export function fieldKind(schema: JsonSchema): FieldKind {
  const name = refName(schema);
  if (name === 'DateTime') return 'date';
  if (name === 'NameList') return 'list';
  const resolved = resolve(schema);
  const types = (Array.isArray(resolved.type) ? resolved.type : [resolved.type]).filter(
    (type) => type !== 'null',
  );
  if (types.length !== 1) return 'other';
  switch (types[0]) {
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'text';
    case 'array':
      return resolve(resolved.items ?? {}).type === 'string' ? 'list' : 'other';
    default:
      return 'other';
  }
}
