import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import type { Request } from 'express';
import { ContractError, contract, loadContract } from '../../src/contract.ts';
import { OperationTable } from '../../src/http/pipeline.ts';
import { exemptRequests } from '../../src/http/rateLimit.ts';

/*
 * Per-operation policy is read from the contract (docs/contributing/architecture.md, "Operation policy"): access
 * must be explicit, and the x- extensions are checked by the loader — which `npm run gen:check` and
 * every start run — so a mistake fails before anything serves, naming the operation.
 */

const dir = mkdtempSync(join(tmpdir(), 'cms-contract-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Operation = Record<string, unknown>;

const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };
const scoped = { security: [{ ApiKeyHeader: ['Contents'] }, { BearerToken: ['Contents'] }] };

let files = 0;
/** Loads a small contract whose paths hold these operations (JSON is YAML). */
async function load(paths: Record<string, Record<string, Operation>>) {
  const file = join(dir, `contract-${++files}.yaml`);
  const document = {
    openapi: '3.1.0',
    info: { title: 'policy', version: '1' },
    security: [{ ApiKeyHeader: [] }, { BearerToken: [] }],
    paths,
    components: {
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-SS-API-KEY' },
        BearerToken: { type: 'http', scheme: 'bearer' },
      },
    },
  };
  writeFileSync(file, JSON.stringify(document));
  return loadContract(file, null);
}

async function problemsOf(paths: Record<string, Record<string, Operation>>): Promise<readonly string[]> {
  const error = await load(paths).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ContractError)) throw new Error(`expected a ContractError, got ${String(error)}`);
  return error.problems;
}

describe('access must be explicit', () => {
  test('an operation without security of its own is refused, by name', async () => {
    expect(await problemsOf({ '/a': { get: { operationId: 'inherits', responses: ok } } })).toEqual([
      expect.stringMatching(/^inherits \(GET \/a\) has no `security` of its own/),
    ]);
  });

  test('an operation whose requirements list no scope and no x-principals is refused', async () => {
    const problems = await problemsOf({
      '/a': { post: { operationId: 'anyToken', security: [{ BearerToken: [] }], responses: ok } },
    });
    expect(problems).toEqual([
      expect.stringMatching(/^anyToken \(POST \/a\) is neither public .* nor scoped/),
    ]);
  });

  test('an empty requirement among the alternatives makes it public, with credentials checked when given', async () => {
    const loaded = await load({
      '/a': { get: { operationId: 'optional', security: [{}, { ApiKeyHeader: [] }], responses: ok } },
    });
    expect(loaded.byId.get('optional')).toMatchObject({ access: 'public', acceptsCredentials: true });
  });

  test('x-principals must name kinds its schemes admit, and the schemes must exist', async () => {
    const problems = await problemsOf({
      '/a': {
        post: {
          operationId: 'keysOnly',
          security: [{ ApiKeyHeader: [] }],
          'x-principals': ['user'],
          responses: ok,
        },
      },
      '/b': { get: { operationId: 'ghost', security: [{ Cookie: ['Contents'] }], responses: ok } },
    });
    expect(problems).toEqual([
      expect.stringMatching(
        /^keysOnly \(POST \/a\) x-principals names user, which none of its security schemes admits/,
      ),
      expect.stringMatching(/^ghost \(GET \/b\) names Cookie, which is not a security scheme/),
    ]);
  });

  test('x-principals on a public operation is refused', async () => {
    const problems = await problemsOf({
      '/a': { get: { operationId: 'open', security: [], 'x-principals': ['user'], responses: ok } },
    });
    expect(problems).toEqual([
      expect.stringMatching(/^open \(GET \/a\) is public, so `x-principals` means nothing/),
    ]);
  });

  test('every fault of every operation is listed at once', async () => {
    const problems = await problemsOf({
      '/a': { get: { operationId: 'first', responses: ok } },
      '/b': { post: { operationId: 'second', security: [{ BearerToken: [] }], responses: ok } },
    });
    expect(problems.map((problem) => problem.split(' ')[0])).toEqual(['first', 'second']);
  });

  test('public, scoped and principal-limited operations load with what they state', async () => {
    const loaded = await load({
      '/public': { get: { operationId: 'open', security: [], responses: ok } },
      '/scoped': { get: { operationId: 'scoped', ...scoped, responses: ok } },
      '/own': {
        post: {
          operationId: 'own',
          security: [{ BearerToken: [] }],
          'x-principals': ['user', 'administrator'],
          responses: ok,
        },
      },
    });
    expect(loaded.byId.get('open')?.access).toBe('public');
    expect(loaded.byId.get('scoped')?.access).toEqual({ scopes: ['Contents'] });
    expect(loaded.byId.get('own')?.access).toEqual({ scopes: [], principals: ['user', 'administrator'] });
  });

  test('the service contract: the logouts are for a token of their own kind, nothing is left unstated', () => {
    expect(contract.byId.get('logoutUser')?.access).toEqual({ scopes: [], principals: ['user'] });
    expect(contract.byId.get('logoutAdministrator')?.access).toEqual({
      scopes: [],
      principals: ['administrator'],
    });
    for (const operation of contract.operations) {
      const access = operation.access;
      expect(access === 'public' || access.scopes.length > 0 || (access.principals?.length ?? 0) > 0).toBe(
        true,
      );
    }
  });
});

describe('the x- extensions', () => {
  test('an unknown x- key is refused, on an operation or a path item', async () => {
    const problems = await problemsOf({
      '/a': {
        'x-rate-limit': false as unknown as Operation,
        get: { operationId: 'typo', ...scoped, 'x-rate-limit': false, responses: ok },
      },
    });
    expect(problems).toEqual([
      expect.stringMatching(/^\/a: unknown extension x-rate-limit/),
      expect.stringMatching(/^typo \(GET \/a\) unknown extension x-rate-limit \(known: x-principals,/),
    ]);
  });

  test.each([
    ['x-changes-credentials', 'yes'],
    ['x-rate-limited', 0],
    ['x-principals', ['robot']],
    ['x-principals', []],
    ['x-success-status', '201'],
    ['x-success-status', 404],
  ])('%s: %j is the wrong type and is refused', async (key, value) => {
    const problems = await problemsOf({
      '/a': { post: { operationId: 'wrong', ...scoped, [key]: value, responses: ok } },
    });
    expect(problems).toEqual([
      expect.stringMatching(new RegExp(`^wrong \\(POST /a\\) is not a valid operation: ${key}`)),
    ]);
  });

  test('defaults: no credential change, rate limited, the one 2xx response', async () => {
    const loaded = await load({
      '/a': { post: { operationId: 'plain', ...scoped, responses: { '201': { description: 'made' } } } },
    });
    expect(loaded.byId.get('plain')).toMatchObject({
      changesCredentials: false,
      rateLimited: true,
      successStatus: 201,
    });
  });

  test('several 2xx responses need x-success-status, naming one of them', async () => {
    const two = { '200': { description: 'same' }, '201': { description: 'made' } };
    expect(await problemsOf({ '/a': { post: { operationId: 'which', ...scoped, responses: two } } })).toEqual(
      [expect.stringMatching(/^which \(POST \/a\) declares 200, 201: say which one/)],
    );
    expect(
      await problemsOf({
        '/a': { post: { operationId: 'absent', ...scoped, 'x-success-status': 202, responses: two } },
      }),
    ).toEqual([
      expect.stringMatching(/^absent \(POST \/a\) x-success-status 202 is not one of its responses/),
    ]);
    const loaded = await load({
      '/a': { post: { operationId: 'stated', ...scoped, 'x-success-status': 201, responses: two } },
    });
    expect(loaded.byId.get('stated')?.successStatus).toBe(201);
  });

  test('x-idempotent needs a scoped POST with the Idempotency-Key header and its statuses', async () => {
    const header = { name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } };
    const statuses = Object.fromEntries(
      ['200', '400', '409', '422', '503'].map((status) => [status, { description: status }]),
    );
    const loaded = await load({
      '/a': {
        post: {
          operationId: 'create',
          ...scoped,
          'x-idempotent': true,
          parameters: [header],
          responses: statuses,
        },
      },
    });
    expect(loaded.byId.get('create')?.idempotent).toBe(true);
    expect(
      await problemsOf({
        '/a': { get: { operationId: 'read', security: [], 'x-idempotent': true, responses: ok } },
        '/b': { post: { operationId: 'headerOnly', ...scoped, parameters: [header], responses: statuses } },
      }),
    ).toEqual([
      'read (GET /a) is x-idempotent but not a POST',
      'read (GET /a) is x-idempotent but public: keys are scoped to the caller',
      'read (GET /a) is x-idempotent but does not declare the Idempotency-Key header',
      'read (GET /a) is x-idempotent but does not declare a 400 response',
      'read (GET /a) is x-idempotent but does not declare a 409 response',
      'read (GET /a) is x-idempotent but does not declare a 422 response',
      'read (GET /a) is x-idempotent but does not declare a 503 response',
      'headerOnly (POST /b) declares the Idempotency-Key header but is not x-idempotent',
    ]);
  });

  test('x-safe needs a POST with a JSON body that neither creates nor changes credentials', async () => {
    const json = { content: { 'application/json': { schema: { type: 'object' } } } };
    const upload = { content: { 'multipart/form-data': { schema: { type: 'object' } } } };
    const loaded = await load({
      '/a': { post: { operationId: 'query', ...scoped, 'x-safe': true, requestBody: json, responses: ok } },
      '/b': { post: { operationId: 'write', ...scoped, requestBody: json, responses: ok } },
    });
    expect(loaded.byId.get('query')?.safe).toBe(true);
    expect(loaded.byId.get('write')?.safe).toBe(false);
    expect(
      await problemsOf({
        '/a': { get: { operationId: 'read', security: [], 'x-safe': true, responses: ok } },
        '/b': {
          post: { operationId: 'avatar', ...scoped, 'x-safe': true, requestBody: upload, responses: ok },
        },
        '/c': {
          post: {
            operationId: 'logout',
            ...scoped,
            'x-safe': true,
            'x-changes-credentials': true,
            requestBody: json,
            responses: ok,
          },
        },
      }),
    ).toEqual([
      'read (GET /a) is x-safe but not a POST (other methods say what they do)',
      'read (GET /a) is x-safe but has no JSON body (its body is the query it asks)',
      'avatar (POST /b) is x-safe but has no JSON body (its body is the query it asks)',
      'logout (POST /c) is x-safe but x-changes-credentials',
    ]);
  });

  test('the service contract: the content list is its one safe POST', () => {
    expect(contract.operations.filter((operation) => operation.safe).map((o) => o.operationId)).toEqual([
      'listContents',
    ]);
  });

  test('the service contract: every create is x-idempotent', () => {
    const idempotent = contract.operations
      .filter((operation) => operation.idempotent)
      .map((o) => o.operationId);
    const creates = contract.operations
      .filter((operation) => /^create[A-Z]/.test(operation.operationId))
      .map((operation) => operation.operationId);
    expect(idempotent).toEqual(expect.arrayContaining(creates));
    expect(idempotent.sort()).toEqual(
      [
        'createAdministrator',
        'createApiKey',
        'createChannel',
        'createContent',
        'createUser',
        'createWebhook',
        'testWebhook',
      ].sort(),
    );
  });

  test('the service contract states its policy: credential changes, exemptions, a 201', () => {
    const marked = (flag: (operation: (typeof contract.operations)[number]) => boolean) =>
      contract.operations
        .filter(flag)
        .map((operation) => operation.operationId)
        .sort();
    expect(marked((operation) => !operation.rateLimited)).toEqual(['healthz', 'ping', 'readyz']);
    expect(contract.byId.get('createApiKey')?.successStatus).toBe(201);
    expect(contract.byId.get('listContents')?.changesCredentials).toBe(false);
  });

  test('the rate limiter exempts the requests its operation match finds to be of exempt operations, by their own method', async () => {
    const loaded = await load({
      '/api/v1/ping': { get: { operationId: 'ping', security: [], 'x-rate-limited': false, responses: ok } },
      '/api/v1/things/{id}/actions/check': {
        post: { operationId: 'check', security: [], 'x-rate-limited': false, responses: ok },
        get: { operationId: 'counted', security: [], responses: ok },
      },
    });
    const table = new OperationTable(loaded.operations.map((operation) => ({ operation, stages: [] })));
    const exempt = exemptRequests((req) => table.match(req.method, req.path)?.route.operation);
    const request = (method: string, path: string) => ({ method, path }) as Request;
    expect(exempt(request('GET', '/api/v1/ping'))).toBe(true);
    expect(exempt(request('HEAD', '/api/v1/ping'))).toBe(false);
    expect(exempt(request('POST', '/api/v1/ping'))).toBe(false);
    expect(exempt(request('GET', '/api/v1/ping/more'))).toBe(false);
    expect(exempt(request('POST', '/api/v1/things/7/actions/check'))).toBe(true);
    expect(exempt(request('POST', '/api/v1/things/7/8/actions/check'))).toBe(false);
    expect(exempt(request('GET', '/api/v1/things/7/actions/check'))).toBe(false);
    expect(exempt(request('GET', '/nothing'))).toBe(false);
    // The operation as the pipeline matches it: any case, one trailing slash.
    expect(exempt(request('GET', '/API/v1/Ping/'))).toBe(true);
  });
});
