/*
 * Requests generated from the contract: for an operation, values drawn from its parameter and body
 * schemas (enums, ranges, lengths, examples for patterned strings), then, often, one mutation of
 * the kinds hostile clients send. Deterministic for a seed, so a failure can be replayed.
 */

export type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  examples?: unknown[];
  example?: unknown;
  format?: string;
};

export type Rng = () => number;

/** mulberry32: small, fast and good enough to spread requests over the input space. */
export function rngOf(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
const chance = (rng: Rng, p: number) => rng() < p;
const int = (rng: Rng, min: number, max: number) => min + Math.floor(rng() * (max - min + 1));

const WORDS = [
  'news',
  'spring',
  'Tech',
  'release',
  'a',
  'é',
  '中文',
  "o'neil",
  '%',
  '_',
  ' ',
  'DROP TABLE',
  '<b>',
];

/**
 * A string of a pattern made only of alternatives of literals and character lists, like the
 * operator's `^(=|!=|[Ii][Nn]|…)$`; undefined for any other pattern.
 */
export function fromAlternatives(rng: Rng, pattern: string): string | undefined {
  const body = /^\^\((.*)\)\$$/.exec(pattern)?.[1];
  if (body === undefined || /[()*+?{}.]/.test(body.replace(/\\./g, ''))) return undefined;
  const alternative = pick(rng, body.split('|'));
  let out = '';
  for (const token of alternative.match(/\[[^\]]+\]|\\.|[^[\\]/g) ?? []) {
    if (token.startsWith('[')) out += pick(rng, [...token.slice(1, -1)]);
    else out += token.startsWith('\\') ? token.slice(1) : token;
  }
  return out;
}

/** Words joined by commas up to the length: an `In` list of many items, a long pattern. */
function longText(rng: Rng, length: number): string {
  let out = '';
  while (out.length < length) out += `${out ? ',' : ''}${pick(rng, WORDS)}${int(rng, 0, 99)}`;
  return out.slice(0, length);
}

function text(rng: Rng, schema: Schema, atLimits = false): string {
  const examples = [...(schema.examples ?? []), ...(schema.example === undefined ? [] : [schema.example])];
  if (schema.pattern !== undefined && chance(rng, 0.5)) {
    const generated = fromAlternatives(rng, schema.pattern);
    if (generated !== undefined) return generated;
  }
  if (
    atLimits &&
    schema.pattern === undefined &&
    schema.maxLength !== undefined &&
    schema.format === undefined
  )
    return longText(rng, Math.min(schema.maxLength, 20_000));
  if (schema.pattern !== undefined || schema.format === 'date-time') {
    const strings = examples.filter((value): value is string => typeof value === 'string');
    if (strings.length > 0) return pick(rng, strings);
  }
  if (examples.length > 0 && chance(rng, 0.5)) {
    const value = pick(rng, examples);
    if (typeof value === 'string') return value;
  }
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 24, Math.max(min, 24));
  let out = '';
  while (out.length < min || (out.length < max && chance(rng, 0.6))) out += pick(rng, WORDS);
  return out.slice(0, Math.max(min, Math.min(out.length, max)));
}

/**
 * A value the schema accepts, most of the time (patterns without examples are guessed). At limits,
 * arrays are as long as the schema allows (up to 1,000) and strings as long as their maxLength.
 */
export function sample(rng: Rng, schema: Schema | undefined, depth = 0, atLimits = false): unknown {
  if (schema === undefined) return null;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum !== undefined) return pick(rng, schema.enum);
  if (schema.oneOf !== undefined) return sample(rng, pick(rng, schema.oneOf), depth, atLimits);
  if (schema.anyOf !== undefined) return sample(rng, pick(rng, schema.anyOf), depth, atLimits);
  if (schema.allOf !== undefined) {
    const merged: Schema = { type: 'object', properties: {}, required: [] };
    for (const part of schema.allOf) {
      Object.assign(merged.properties as object, part.properties ?? {});
      merged.required?.push(...(part.required ?? []));
    }
    return sample(rng, merged, depth, atLimits);
  }
  const type = Array.isArray(schema.type) ? pick(rng, schema.type) : schema.type;
  switch (type) {
    case 'integer': {
      const min = schema.minimum ?? 0;
      const max = Math.min(schema.maximum ?? 30, min + 30);
      return int(rng, min, max);
    }
    case 'number':
      return int(rng, 0, 100);
    case 'boolean':
      return chance(rng, 0.5);
    case 'null':
      return null;
    case 'array': {
      if (depth > 4) return [];
      const count = atLimits
        ? Math.min(schema.maxItems ?? 3, 1000)
        : int(rng, schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3));
      return Array.from({ length: count }, () => sample(rng, schema.items, depth + 1, atLimits));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      if (depth > 4) return out;
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        if (schema.required?.includes(name) || chance(rng, 0.35))
          out[name] = sample(rng, property, depth + 1, atLimits);
      }
      return out;
    }
    case 'string':
      return text(rng, schema, atLimits);
    default:
      return schema.properties ? sample(rng, { ...schema, type: 'object' }, depth, atLimits) : text(rng, {});
  }
}

/** Values of the wrong kind, or of the right kind at an awkward extreme. */
export const AWKWARD_VALUES: unknown[] = [
  null,
  true,
  -1,
  0,
  2147483648,
  -2147483649,
  1e308,
  Number.MAX_SAFE_INTEGER,
  1.5,
  '',
  ' ',
  'x'.repeat(30_000),
  '\u0000',
  '\u202e\u200b',
  '𝕏😀',
  '../../etc/passwd',
  "' OR 1=1 --",
  'javascript:alert(1)',
  [],
  [[[]]],
  {},
  { __proto__: { polluted: true } },
  { constructor: { prototype: { polluted: true } } },
];

export const AWKWARD_PATH_VALUES = [
  '0',
  '-1',
  'Infinity',
  '1e309',
  '0x0A',
  '%2010',
  'abc',
  '99999999999999999999',
  '1.5',
  '%00',
  '..%2f',
];
