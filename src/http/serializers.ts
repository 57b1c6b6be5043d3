import fastJson from 'fast-json-stringify';
import type { Contract, HttpMethod } from '../contract.ts';

/*
 * Response bodies serialised by code compiled from the contract's own response schemas
 * (fast-json-stringify) instead of JSON.stringify: the compiled function knows every property in
 * advance, so it neither walks the object's keys nor guesses types. Used in production only, where
 * responses are not validated; in development and tests, bodies go through JSON.stringify and the
 * response validator, which is what proves that the handlers' bodies match these schemas (a
 * compiled serialiser writes only what the schema declares and coerces to the declared types).
 * One serialiser per operation and status, compiled on the first response that needs it.
 */

export type Serialize = (body: unknown) => string;

type JsonSchema = Record<string, unknown>;
type PathItem = Partial<Record<HttpMethod, { responses?: Record<string, ResponseObject> }>>;
type ResponseObject = { content?: Record<string, { schema?: JsonSchema }> };

/** The resolved (no $ref) schema of an operation's JSON response, if it declares one. */
export function responseSchemaOf(
  contract: Contract,
  path: string,
  method: HttpMethod,
  status: number,
): JsonSchema | undefined {
  const paths = contract.resolved.paths as Record<string, PathItem> | undefined;
  const content = paths?.[path]?.[method]?.responses?.[String(status)]?.content;
  return content?.['application/json']?.schema;
}

/** A (resolved) schema's required properties, its `allOf` parts' included. */
function requiredOf(schema: JsonSchema): string[] {
  const own = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const parts = Array.isArray(schema.allOf) ? (schema.allOf as JsonSchema[]) : [];
  return [...own, ...parts.flatMap(requiredOf)];
}

/**
 * Compiles one serialiser; undefined when the schema uses something the compiler cannot take. A
 * schema that is only an `anyOf` of objects (a record, or some of its fields: `fields`) gets one
 * serialiser per branch, and a value goes to the first branch whose required properties it all
 * has: fast-json-stringify would pick the branch by validating the value against each in turn.
 */
export function compileSerializer(schema: JsonSchema): Serialize | undefined {
  const branches = schema.anyOf;
  if (Array.isArray(branches) && Object.keys(schema).length === 1 && branches.length > 1) {
    const compiled = (branches as JsonSchema[]).map((branch) => ({
      required: requiredOf(branch),
      serialize: branch.type === 'object' ? compileSerializer(branch) : undefined,
    }));
    if (compiled.every(({ serialize }) => serialize !== undefined)) {
      const last = compiled.length - 1;
      const lastSerialize = (compiled[last] as (typeof compiled)[number]).serialize as Serialize;
      const hasAll = (value: object, required: readonly string[]) => {
        for (let index = 0; index < required.length; index++)
          if (!((required[index] as string) in value)) return false;
        return true;
      };
      return (value) => {
        for (let index = 0; index < last; index++) {
          const { required, serialize } = compiled[index] as (typeof compiled)[number];
          if (typeof value === 'object' && value !== null && hasAll(value, required))
            return (serialize as Serialize)(value);
        }
        return lastSerialize(value);
      };
    }
  }
  try {
    // The compiler keeps references into the schema: it gets its own copy of the shared document.
    const serialize = fastJson(structuredClone(schema) as fastJson.AnySchema) as Serialize;
    return serialize;
  } catch {
    return undefined;
  }
}

/**
 * The serialisers of one operation's responses by status, each compiled on the first response that
 * needs it; undefined for a status to send with JSON.stringify. One per operation, made when its
 * route is built, so a response looks its serialiser up by status alone.
 */
export function operationSerializers(
  contract: Contract,
  path: string,
  method: HttpMethod,
): (status: number) => Serialize | undefined {
  const compiled = new Map<number, Serialize | undefined>();
  return (status) => {
    if (compiled.has(status)) return compiled.get(status);
    const schema = responseSchemaOf(contract, path, method, status);
    const serialize = schema === undefined ? undefined : compileSerializer(schema);
    compiled.set(status, serialize);
    return serialize;
  };
}
