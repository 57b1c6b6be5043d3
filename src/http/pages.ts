import { randomBytes } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Response } from 'express';
import type { Contract, ContractOperation } from '../contract.ts';
import { utf8Of } from '../domain/jsonText.ts';
import { nextStep, STREAM_AFTER_BYTES } from '../domain/longWork.ts';
import { compileSerializer, responseSchemaOf, type Serialize } from './serializers.ts';

/*
 * A list answer (a page of records: contents, recycled contents, stl/contents…) is as large as the
 * records it holds, and stored values may be megabytes each. Serialised in one piece, a page of
 * such records would hold the worker's event loop for as long as it takes to build and write tens
 * of megabytes. A page is therefore serialised record by record: while its records stay under
 * STREAM_AFTER_BYTES, it is sent as one text, byte for byte what serialising it whole gives (with
 * Content-Length and ETag, as before); past that, it is streamed in chunks of about SLICE_UNITS,
 * one per turn of the event loop, waiting for the socket to drain when it is full, so other
 * requests are answered between chunks. A record's long strings are themselves escaped and written
 * slice by slice, so that not even one record of megabytes holds the loop for long
 * (docs/security/time-limits.md, "The size of an answer").
 */

const identity: Serialize = (value) => JSON.stringify(value);

/** What a list operation's success answer looks like: its array property and how to serialise it. */
export interface PageShape {
  status: number;
  key: string;
  /** One record. */
  item: Serialize;
  /** The answer with its array emptied (the frame the records go into). */
  frame: Serialize;
  /** Checks a whole answer against the contract before it is streamed (outside production). */
  check?: ((body: unknown) => void) | undefined;
}

type JsonSchema = Record<string, unknown>;

/**
 * The page shape of an operation whose success answer (JSON) is an object with exactly one array
 * property; undefined for every other operation.
 */
export function pageShapeOf(
  contract: Contract,
  operation: ContractOperation,
  status: number,
  compiled: boolean,
  checkerOf: ((schema: JsonSchema) => (body: unknown) => void) | undefined,
): PageShape | undefined {
  const schema = responseSchemaOf(contract, operation.path, operation.method, status);
  const properties =
    schema?.type === 'object' ? (schema.properties as Record<string, JsonSchema>) : undefined;
  if (schema === undefined || properties === undefined) return undefined;
  const arrays = Object.entries(properties).filter(([, property]) => property.type === 'array');
  if (arrays.length !== 1) return undefined;
  const [key, array] = arrays[0] as [string, JsonSchema];
  const itemSchema = array.items as JsonSchema | undefined;
  // Compiled on the first page sent (as serializers.ts does), both or neither: a record and its
  // frame must come from the same serialiser.
  let serializers: { item: Serialize; frame: Serialize } | undefined;
  const serializersOf = () => {
    if (serializers !== undefined) return serializers;
    const item = compiled && itemSchema !== undefined ? compileSerializer(itemSchema) : undefined;
    const frame = compiled ? compileSerializer(schema) : undefined;
    const both = item !== undefined && frame !== undefined;
    serializers = { item: both ? item : identity, frame: both ? frame : identity };
    return serializers;
  };
  let check: ((body: unknown) => void) | undefined;
  const checkOf = (maker: (schema: JsonSchema) => (body: unknown) => void) => {
    check ??= maker(schema);
    return check;
  };
  return {
    status,
    key,
    item: (value) => serializersOf().item(value),
    frame: (value) => serializersOf().frame(value),
    check: checkerOf === undefined ? undefined : (body) => checkOf(checkerOf)(body),
  };
}

/** Resolves once the response can take more, or is closed. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * A string value of a record longer than this (UTF-16 units) is escaped and written in slices of
 * this size, one per turn of the event loop: one record's text (a body of megabytes, twice in
 * form A) is then never built, nor written, in one piece.
 */
export const SLICE_UNITS = 1 << 16;

/** Stands for a long string in the record serialised without it; random, so no stored value is it. */
const PLACEHOLDER = `cms-slice-${randomBytes(12).toString('hex')}-`;

/** A record's text: serialised JSON, and the long strings that go between, escaped slice by slice. */
type Piece = string | { long: string };

/** The length of a piece, in UTF-16 units (a long string's before escaping). */
const sizeOf = (piece: Piece) => (typeof piece === 'string' ? piece.length : piece.long.length + 2);

/**
 * A record as pieces: its top-level long strings are replaced by placeholders, the record is
 * serialised (small, then), and its text is cut where the placeholders' JSON strings stand.
 */
function recordPieces(shape: PageShape, record: unknown): Piece[] {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return [shape.item(record)];
  let light: Record<string, unknown> | undefined;
  const longs: string[] = [];
  // for…in, not Object.entries: a page's records are plain objects, and entries made a pair per field.
  for (const key in record) {
    const value = (record as Record<string, unknown>)[key];
    if (typeof value !== 'string' || value.length <= SLICE_UNITS) continue;
    light ??= { ...(record as Record<string, unknown>) };
    light[key] = `${PLACEHOLDER}${longs.length}`;
    longs.push(value);
  }
  if (light === undefined) return [shape.item(record)];
  const text = shape.item(light);
  // A placeholder the serialiser left out (a property the schema does not have) stays out.
  const found = longs
    .map((long, index) => {
      const quoted = JSON.stringify(`${PLACEHOLDER}${index}`);
      return { long, at: text.indexOf(quoted), length: quoted.length };
    })
    .filter(({ at }) => at >= 0)
    .sort((a, b) => a.at - b.at);
  const pieces: Piece[] = [];
  let from = 0;
  for (const { long, at, length } of found) {
    pieces.push(text.slice(from, at), { long });
    from = at + length;
  }
  pieces.push(text.slice(from));
  return pieces;
}

/**
 * A long string as JSON, slice by slice: JSON.stringify's text of the whole string (which the
 * serialisers give for strings this long), since a cut never separates a surrogate pair, whose
 * halves it would escape apart.
 */
function* escapedSlices(value: string): Generator<string> {
  yield '"';
  for (let start = 0; start < value.length; ) {
    let end = Math.min(value.length, start + SLICE_UNITS);
    const last = value.charCodeAt(end - 1);
    if (end < value.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield JSON.stringify(value.slice(start, end)).slice(1, -1);
    start = end;
  }
  yield '"';
}

/** The text of pieces, in chunks: a serialised part whole, a long string slice by slice. */
function* chunksOf(pieces: Iterable<Piece>): Generator<string> {
  for (const piece of pieces) {
    if (typeof piece === 'string') yield piece;
    else yield* escapedSlices(piece.long);
  }
}

/** The pieces of the records from `next` on, each record made when the stream reaches it. */
function* remainingPieces(shape: PageShape, records: unknown[], next: number): Generator<Piece> {
  for (let index = next; index < records.length; index++) {
    yield ',';
    yield* recordPieces(shape, records[index]);
  }
}

/**
 * Sends a page answer. `whole` sends a small page as one text (the dispatcher's usual way, with
 * its ETag); a large one is streamed here. False when the body is not a page of this shape.
 */
export async function sendPage(
  res: Response,
  shape: PageShape,
  body: unknown,
  whole: (bytes: Buffer) => void,
): Promise<boolean> {
  const records = (body as Record<string, unknown> | null)?.[shape.key];
  if (!Array.isArray(records)) return false;
  // The records' pieces while they add up to at most STREAM_AFTER_BYTES; the rest is made as it is sent.
  const first: Piece[] = [];
  let bytes = 0;
  let next = 0;
  while (next < records.length && bytes <= STREAM_AFTER_BYTES) {
    if (next > 0) first.push(',');
    for (const piece of recordPieces(shape, records[next++])) {
      first.push(piece);
      bytes += sizeOf(piece);
    }
  }
  const frame = shape.frame({ ...(body as Record<string, unknown>), [shape.key]: [] });
  const marker = `${JSON.stringify(shape.key)}:[`;
  const at = frame.indexOf(`${marker}]`);
  // Only a frame whose serialiser writes the array where expected can take the records.
  if (at < 0) return false;
  const split = at + marker.length;
  const head = frame.slice(0, split);
  const tail = frame.slice(split);
  if (bytes <= STREAM_AFTER_BYTES) {
    whole(utf8Of([head, ...chunksOf(first), tail]));
    return true;
  }
  shape.check?.(body);
  // Streamed: no Content-Length (chunked), and no ETag, which needs the whole text before the
  // first byte is sent.
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (res.req.method === 'HEAD') {
    res.end();
    return true;
  }
  // The first chunk goes out with the head; every other waits for a turn of the event loop, or for
  // the socket to drain when it is full.
  let pending = head;
  for (const chunk of chunksOf(concat(first, remainingPieces(shape, records, next)))) {
    if (pending.length + chunk.length <= SLICE_UNITS) {
      pending += chunk;
      continue;
    }
    if (pending.length > 0) {
      const room = res.write(pending, 'utf8');
      if (!room) await drained(res);
      await nextStep();
      if (res.destroyed) return true;
    }
    pending = chunk;
  }
  res.end(pending + tail, 'utf8');
  return true;
}

function* concat<T>(...parts: Iterable<T>[]): Generator<T> {
  for (const part of parts) yield* part;
}

/**
 * Outside production, express-openapi-validator checks every JSON answer sent with res.json; a
 * streamed page is not, so it is checked here against the same response schema (JSON Schema
 * 2020-12, as OpenAPI 3.1 has it), and a mismatch is a bug of the service, thrown as the
 * validator's would be.
 */
export function responseChecker(operationId: string): (schema: JsonSchema) => (body: unknown) => void {
  return (schema) => {
    const validate = checkerAjv().compile(structuredClone(schema));
    return (body) => {
      if (!validate(body)) {
        const [first] = validate.errors ?? [];
        throw new Error(
          `${operationId}'s streamed answer does not match the contract: ${first?.instancePath ?? ''} ${first?.message ?? ''}`,
        );
      }
    };
  };
}

// Made on first use and the same for every app: it compiles the contract's schemas, which are the process's.
let ajv: Ajv2020 | undefined;
function checkerAjv(): Ajv2020 {
  if (ajv !== undefined) return ajv;
  ajv = new Ajv2020({ strict: false, allErrors: false });
  (addFormatsModule as unknown as (instance: Ajv2020) => Ajv2020)(ajv);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31,
  });
  return ajv;
}
