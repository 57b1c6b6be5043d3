import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Response } from 'express';
import { contract } from '../src/contract.ts';
import { type PageShape, pageShapeOf, sendPage } from '../src/http/pages.ts';
import { operationSerializers, responseSchemaOf } from '../src/http/serializers.ts';

/*
 * `npx tsx bench/pageSerialise.ts`: the CPU cost of making an ordinary list page's bytes (form A,
 * ~2 KB bodies), hashed for its ETag: serialised whole with the compiled serialiser, as before
 * src/http/pages.ts, and record by record into one buffer, as small pages are now (bench/HOSTILE.md,
 * "Pages of large records"; bench/README.md, "The list page against floor R, second pass").
 */

const operation = contract.operations.find((candidate) => candidate.operationId === 'listContents');
if (operation === undefined) throw new Error('no listContents in the contract');
const whole = operationSerializers(contract, operation.path, operation.method)(200);
const listSchema = responseSchemaOf(contract, operation.path, operation.method, 200);
const maybeShape = pageShapeOf(contract, operation, 200, true, undefined);
if (whole === undefined || maybeShape === undefined || listSchema === undefined) {
  throw new Error('listContents has no compiled page serialiser');
}
const shape: PageShape = maybeShape;

const body = 'lorem ipsum dolor sit amet '.repeat(80);
// A listed content is a whole record or a selection of its fields (anyOf): the whole record's schema.
const itemSchema = (listSchema.properties as { contents: { items: { anyOf: { properties: Schemas }[] } } })
  .contents.items.anyOf[0] as { properties: Schemas };
type Schemas = Record<string, { type?: unknown; format?: string }>;
/** A record with every property of form A, of its type; the body as `content` and `body`. */
const record = (id: number) =>
  Object.fromEntries(
    Object.entries(itemSchema.properties).map(([name, property]) => {
      const type = Array.isArray(property.type) ? property.type[0] : property.type;
      if (name === 'content' || name === 'body') return [name, body];
      if (type === 'integer' || type === 'number') return [name, id];
      if (type === 'boolean') return [name, true];
      if (type === 'array') return [name, ['featured']];
      if (property.format === 'date-time') return [name, '2024-01-01T08:00:00Z'];
      return [name, `${name} ${id}`];
    }),
  );

function perPage(size: number) {
  const page = {
    totalCount: 100000,
    contents: Array.from({ length: size }, (_, index) => record(index + 1)),
  };
  const run = (label: string, serialise: () => Buffer) => {
    let bytes: Buffer = Buffer.alloc(0);
    for (let i = 0; i < 200; i++) bytes = serialise();
    const rounds = 2000;
    const start = performance.now();
    for (let i = 0; i < rounds; i++) bytes = serialise();
    const us = ((performance.now() - start) * 1000) / rounds;
    console.log(`| ${size} | ${label} | ${us.toFixed(1)} | ${bytes.length} |`);
    return bytes;
  };
  // What the answer costs until its bytes can be written: made, measured, hashed (its ETag), encoded.
  const hashed = (bytes: Buffer | string) => createHash('sha1').update(bytes).digest('base64');
  // Before: the records' texts concatenated into one string (as pages.ts did), then measured, hashed
  // and encoded to be written.
  const frame = shape.frame({ ...page, contents: [] });
  const split = frame.indexOf('"contents":[') + '"contents":['.length;
  const a = run('one string, then measured, hashed and encoded', () => {
    let text = frame.slice(0, split);
    page.contents.forEach((record, index) => {
      text += `${index > 0 ? ',' : ''}${shape.item(record)}`;
    });
    text += frame.slice(split);
    Buffer.byteLength(text);
    hashed(text);
    return Buffer.from(text);
  });
  const b = run('record by record into one buffer, hashed (pages.ts)', () => {
    let sent: Buffer = Buffer.alloc(0);
    const res = { req: { method: 'POST' } } as unknown as Response;
    void sendPage(res, shape, page, (bytes) => {
      hashed(bytes);
      sent = bytes;
    });
    return sent;
  });
  if (!a.equals(b)) throw new Error('not byte-identical');
}

console.log('| perPage | how | µs per page | bytes |');
console.log('|---|---|---|---|');
// Up to 200 records of this size stay under the threshold of streaming (STREAM_AFTER_BYTES).
for (const size of [30, 100, 200]) perPage(size);
