import { performance } from 'node:perf_hooks';
import type { Response } from 'express';
import { contract } from '../src/contract.ts';
import { type PageShape, pageShapeOf, sendPage } from '../src/http/pages.ts';
import { operationSerializers, responseSchemaOf } from '../src/http/serializers.ts';

/*
 * `npx tsx bench/pageSerialise.ts`: the CPU cost of serialising an ordinary list page (form A,
 * ~2 KB bodies) whole with the compiled serialiser, as before src/http/pages.ts, and record by
 * record then joined, as small pages are now (bench/HOSTILE.md, "Pages of large records").
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
const itemSchema = (listSchema.properties as { contents: { items: { properties: Schemas } } }).contents.items;
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
  const run = (label: string, serialise: () => string) => {
    let text = '';
    for (let i = 0; i < 200; i++) text = serialise();
    const rounds = 2000;
    const start = performance.now();
    for (let i = 0; i < rounds; i++) text = serialise();
    const us = ((performance.now() - start) * 1000) / rounds;
    console.log(`| ${size} | ${label} | ${us.toFixed(1)} | ${text.length} |`);
    return text;
  };
  const a = run('whole', () => whole?.(page) ?? '');
  const b = run('record by record (pages.ts)', () => {
    let text = '';
    const res = { req: { method: 'POST' } } as unknown as Response;
    void sendPage(res, shape, page, (whole) => {
      text = whole;
    });
    return text;
  });
  if (a !== b) throw new Error('not byte-identical');
}

console.log('| perPage | how | µs per page | characters |');
console.log('|---|---|---|---|');
// Up to 200 records of this size stay under the threshold of streaming (STREAM_AFTER_BYTES).
for (const size of [30, 100, 200]) perPage(size);
