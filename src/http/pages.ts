import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Response } from 'express';
import type { Contract, ContractOperation } from '../contract.ts';
import { compileSerializer, responseSchemaOf, type Serialize } from './serializers.ts';

/*
 * A list answer (a page of records: contents, recycled contents, stl/contents…) is as large as the
 * records it holds, and stored values may be megabytes each. Serialised in one piece, a page of
 * such records would hold the worker's event loop for as long as it takes to build and write tens
 * of megabytes. A page is therefore serialised record by record: while its records stay under
 * STREAM_AFTER_BYTES, it is sent as one text, byte for byte what serialising it whole gives (with
 * Content-Length and ETag, as before); past that, it is streamed, a piece of records (about
 * STREAM_PIECE_BYTES, or one larger record) per turn of the event loop, waiting for the socket to
 * drain when it is full, so other requests are answered between pieces
 * (docs/security/time-limits.md, "The size of an answer").
 */

/** Serialised record bytes (UTF-16 units, which is cheap to count) past which a page is streamed. */
export const STREAM_AFTER_BYTES = 1 << 20;

/**
 * A streamed page's records are written in pieces of about this size (or one record, when larger),
 * one piece per turn of the event loop: a write and a turn per small record (a channel is ~1.3 KB)
 * made 10,000 of each for a list of 10,000 channels.
 */
export const STREAM_PIECE_BYTES = 64 * 1024;

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

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Sends a page answer. `whole` sends a small page as one text (the dispatcher's usual way, with
 * its ETag); a large one is streamed here. False when the body is not a page of this shape.
 */
export async function sendPage(
  res: Response,
  shape: PageShape,
  body: unknown,
  whole: (text: string) => void,
): Promise<boolean> {
  const records = (body as Record<string, unknown> | null)?.[shape.key];
  if (!Array.isArray(records)) return false;
  // Concatenated, not joined: a join flattens every record's text, which made an ordinary page
  // cost up to three times its whole serialisation (bench/pageSerialise.ts).
  let written = '';
  let bytes = 0;
  let next = 0;
  while (next < records.length && bytes <= STREAM_AFTER_BYTES) {
    const text = shape.item(records[next]);
    written += next++ === 0 ? text : `,${text}`;
    bytes += text.length;
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
    whole(head + written + tail);
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
  let room = res.write(head + written, 'utf8');
  while (next < records.length) {
    await (room ? nextTurn() : drained(res));
    if (res.destroyed) return true;
    let piece = '';
    do piece += `,${shape.item(records[next++])}`;
    while (next < records.length && piece.length < STREAM_PIECE_BYTES);
    room = res.write(piece, 'utf8');
  }
  res.end(tail, 'utf8');
  return true;
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
