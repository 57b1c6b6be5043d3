import { $RefParser } from '@apidevtools/json-schema-ref-parser';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import pino from 'pino';
import { type ContractOperation, contract } from '../../src/contract.ts';
import { handlers } from '../../src/operations/registry.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import {
  AWKWARD_PATH_VALUES,
  AWKWARD_VALUES,
  pick,
  type Rng,
  rngOf,
  type Schema,
  sample,
} from './generate.ts';

/*
 * The project's own fuzzer: requests generated from openapi/cms.yaml for every operation, valid
 * ones with random values and mutated ones (wrong types, missing and extra fields, huge and
 * non-finite values, unicode and control characters, __proto__ keys, deep nesting, malformed JSON,
 * missing and wrong media types, repeated and encoded parameter names, bad credentials, bodies
 * with every array and string as long as the contract allows). It fails
 * on a 5xx other than a documented 503, an error body that is not problem+json, a 2xx body the
 * contract does not describe (Ajv 2020 over the contract's own schemas), and any response or log
 * line holding a stack frame, SQL text or a credential the run used.
 *
 * FUZZ_REQUESTS (default 2,000; `npm run fuzz` runs 20,000) and FUZZ_SEED (default 20261123) pick
 * the run; a failure lists the seed and the requests that failed, so it can be replayed.
 */

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

type Operation = {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
} & {
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
};
type Parameter = { name: string; in: string; required?: boolean; schema?: Schema };

const lines: string[] = [];
let app: TestApp;
let typed: TypedClient;
let key: string;
let paths: Record<string, Record<string, Operation & { parameters?: Parameter[] }>>;
const secrets = new Set<string>();
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats(ajv);
ajv.addFormat('int32', {
  type: 'number',
  validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31,
});
const validators = new Map<string, ValidateFunction>();

beforeAll(async () => {
  ({ app, key } = await startFixtureApp('all', {
    config: { rateLimitPerMinute: 0 },
    logger: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
  }));
  secrets.add(key);
  typed = await startClient(app);
  const document = (await $RefParser.dereference(structuredClone(contract.document))) as {
    paths: typeof paths;
  };
  paths = document.paths;
}, 60_000);
afterAll(async () => {
  await typed?.close();
  await app?.close();
});

function operationOf(operation: ContractOperation): Operation & { parameters: Parameter[] } {
  const item = paths[operation.path] as Record<string, unknown> & { parameters?: Parameter[] };
  const described = item[operation.method] as Operation;
  return { ...described, parameters: [...(item.parameters ?? []), ...(described.parameters ?? [])] };
}

interface Built {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  mutation: string;
}

const MUTATIONS = [
  'none',
  'none',
  'none',
  'wrong-value',
  'drop-required',
  'extra-field',
  'proto-key',
  'huge-string',
  'malformed-json',
  'deep-nesting',
  'no-content-type',
  'wrong-content-type',
  'repeated-parameter',
  'encoded-parameter-name',
  'awkward-path',
  'no-credentials',
  'bad-credentials',
  'unknown-parameter',
  'at-limits',
] as const;

function build(rng: Rng, operation: ContractOperation): Built {
  const described = operationOf(operation);
  const mutation = pick(rng, MUTATIONS);
  const query = new URLSearchParams();
  let path = operation.path;
  for (const parameter of described.parameters) {
    if (parameter.in === 'path') {
      // Awkward values are written as they are (already encoded where they mean to be); a sampled
      // value is encoded as clients do: a bare space at the end would be trimmed off the URL, and
      // the empty segment left would address another route (the collection, `/administrators/`).
      const value =
        mutation === 'awkward-path' && rng() < 0.7
          ? pick(rng, AWKWARD_PATH_VALUES)
          : encodeURIComponent(
              String(rng() < 0.8 ? 1 + Math.floor(rng() * 12) : sample(rng, parameter.schema)),
            );
      path = path.replace(`{${parameter.name}}`, value === '' ? '0' : value);
    } else if (parameter.in === 'query' && (parameter.required || rng() < 0.4)) {
      query.append(parameter.name, String(sample(rng, parameter.schema)));
    }
  }
  if (mutation === 'repeated-parameter') {
    const name = described.parameters.find((parameter) => parameter.in === 'query')?.name ?? 'siteId';
    query.append(name, '1');
    query.append(name, '2');
  }
  if (mutation === 'unknown-parameter')
    query.append(pick(rng, ['where', 'connectionString', 'x', '__proto__']), '1');
  let search = query.toString();
  if (mutation === 'encoded-parameter-name') search += `${search ? '&' : ''}%61piKey=${key}&apiKey[]=${key}`;

  const headers: Record<string, string> = {};
  if (mutation === 'bad-credentials') headers['X-SS-API-KEY'] = pick(rng, ['cms_bad', '', 'x'.repeat(300)]);
  else if (mutation !== 'no-credentials') headers['X-SS-API-KEY'] = key;

  let body: string | undefined;
  const schema = described.requestBody?.content?.['application/json']?.schema;
  if (schema !== undefined) {
    const value = sample(rng, schema, 0, mutation === 'at-limits') as Record<string, unknown>;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const names = Object.keys(value);
      if (mutation === 'wrong-value' && names.length > 0) value[pick(rng, names)] = pick(rng, AWKWARD_VALUES);
      if (mutation === 'drop-required' && schema.required?.length) delete value[pick(rng, schema.required)];
      if (mutation === 'extra-field') value[pick(rng, ['extra', 'constructor', 'toString', ''])] = 1;
      if (mutation === 'huge-string' && names.length > 0) value[pick(rng, names)] = 'é'.repeat(200_000);
    }
    body = JSON.stringify(value);
    if (mutation === 'proto-key') body = `{"__proto__":{"polluted":true},${body.slice(1)}`.replace(',}', '}');
    if (mutation === 'malformed-json') body = body.slice(0, Math.max(1, body.length - 1));
    if (mutation === 'deep-nesting') body = `${'['.repeat(3000)}${']'.repeat(3000)}`;
    if (mutation !== 'no-content-type') {
      headers['Content-Type'] = mutation === 'wrong-content-type' ? 'text/plain' : 'application/json';
    }
  } else if (operation.method !== 'get' && (mutation === 'deep-nesting' || mutation === 'malformed-json')) {
    body = mutation === 'deep-nesting' ? '['.repeat(3000) : '{"a":';
    headers['Content-Type'] = 'application/json';
  }
  return {
    method: operation.method.toUpperCase(),
    url: `${path}${search ? `?${search}` : ''}`,
    headers,
    body,
    mutation,
  };
}

function validatorFor(
  operation: ContractOperation,
  status: number,
  mediaType: string,
): ValidateFunction | undefined {
  const id = `${operation.operationId} ${status} ${mediaType}`;
  if (!validators.has(id)) {
    const schema = operationOf(operation).responses?.[String(status)]?.content?.[mediaType]?.schema;
    if (schema === undefined) return undefined;
    validators.set(id, ajv.compile(schema as object));
  }
  return validators.get(id);
}

const STACK_FRAME = /\n\s+at \S+ \(|\bat [\w./-]+\.(ts|js):\d+:\d+/;
const SQL_TEXT =
  /SELECT [^"\n]{0,200}FROM "|INSERT INTO "|UPDATE "\w+" SET|DELETE FROM "|\$queryRaw|prisma\./i;

test(`${REQUESTS} contract-generated requests (seed ${SEED}): no 5xx, problems for errors, 2xx as the contract says, no leaks`, async () => {
  const rng = rngOf(SEED);
  const operations = contract.operations.filter((operation) => operation.operationId in handlers);
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  const fail = (request: Built, status: number, why: string) => {
    if (failures.length < 20)
      failures.push(
        `${request.method} ${request.url.slice(0, 200)} [${request.mutation}] → ${status}: ${why}`,
      );
  };

  for (let i = 0; i < REQUESTS; i++) {
    const operation = pick(rng, operations);
    const request = build(rng, operation);
    const response = await fetch(`${typed.baseUrl}${request.url}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    const text = mediaType.startsWith('image/') ? '' : await response.text();
    const declared = operationOf(operation).responses ?? {};

    if (response.status >= 500 && !(response.status === 503 && '503' in declared)) {
      fail(request, response.status, text.slice(0, 300));
    } else if (response.status >= 400) {
      if (mediaType !== 'application/problem+json') fail(request, response.status, `media type ${mediaType}`);
      else {
        const problem = JSON.parse(text) as { status?: number; type?: string };
        if (problem.status !== response.status || !problem.type?.startsWith('https://cms.example/problems/'))
          fail(request, response.status, `not a problem: ${text.slice(0, 200)}`);
      }
    } else if (mediaType === 'application/json') {
      const validate = validatorFor(operation, response.status, mediaType);
      if (validate === undefined) fail(request, response.status, 'a status the contract does not declare');
      else if (!validate(JSON.parse(text))) fail(request, response.status, ajv.errorsText(validate.errors));
    }
    if (STACK_FRAME.test(text) || SQL_TEXT.test(text))
      fail(request, response.status, `leak: ${text.slice(0, 200)}`);
    for (const secret of secrets)
      if (text.includes(secret)) fail(request, response.status, 'the API key in the answer');

    // Keys the run itself deleted or reset: carry on with a new one.
    if (response.status === 401 && request.headers['X-SS-API-KEY'] === key) {
      key = await app.createApiKey('all');
      secrets.add(key);
    }
  }

  for (const line of lines) {
    if (STACK_FRAME.test(line) || SQL_TEXT.test(line)) failures.push(`log line leaks: ${line.slice(0, 300)}`);
    for (const secret of secrets)
      if (line.includes(secret)) failures.push(`log line holds an API key: ${line.slice(0, 200)}`);
    if (failures.length > 40) break;
  }
  expect(failures).toEqual([]);
  // The generator must reach the handlers, not only the validator: a fair share are answered 2xx.
  const answered = [...statuses]
    .filter(([status]) => status < 300)
    .reduce((sum, [, count]) => sum + count, 0);
  expect(answered).toBeGreaterThan(REQUESTS * 0.15);
  console.log(`fuzz statuses (seed ${SEED}): ${JSON.stringify(Object.fromEntries(statuses))}`);
}, 600_000);
