import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import express from 'express';
import supertest from 'supertest';
import type { ContractOperation } from '../../src/contract.ts';
import { notFound } from '../../src/domain/errors.ts';
import { operationBody } from '../../src/http/bodies.ts';
import { matchedOperation, OperationTable, runStages, servePipeline } from '../../src/http/pipeline.ts';
import { validationStages } from '../../src/http/validation.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/*
 * Each request is matched once, by one route per operation (src/http/pipeline.ts) whose chain is authorization, integer
 * parameters, the validator's stages (its route lookup done once per operation, src/http/
 * validation.ts) and the handler. These tests repeat requests of one operation, so that the later
 * ones take the kept lookup, and check that every one of them is still authorized, checked and
 * validated on its own parameters.
 */

let app: TestApp;
let key: string;
let channelsOnly: string;
const seen: unknown[] = [];

beforeAll(async () => {
  app = await startTestApp({
    handlers: {
      getChannel: async (input) => {
        seen.push(input.path);
        throw notFound('recorded');
      },
    },
  });
  key = await app.createApiKey('all');
  channelsOnly = await app.createApiKey(['Channels']);
});
afterAll(() => app.close());

const getChannel = (path: string) => app.request.get(path).set('X-SS-API-KEY', key);

describe('one route per operation', () => {
  test('every request of an operation gets its own path parameters, coerced', async () => {
    seen.length = 0;
    for (const [siteId, channelId] of [
      [12, 34],
      [7, 8],
      [1, 99],
    ]) {
      expect((await getChannel(`/api/v1/channels/${siteId}/${channelId}`)).status).toBe(404);
    }
    expect(seen).toEqual([
      { siteId: 12, channelId: 34 },
      { siteId: 7, channelId: 8 },
      { siteId: 1, channelId: 99 },
    ]);
  });

  test('a later request of the same operation is still validated against the contract', async () => {
    expect((await getChannel('/api/v1/channels/1/2')).status).toBe(404);
    seen.length = 0;
    // Plain digits (the integer stage lets them by) beyond int32: the validator's 400.
    const tooLarge = await getChannel('/api/v1/channels/99999999999/2');
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.errors.map((error: { path: string }) => error.path)).toEqual(['/path/siteId']);
    const notPlain = await getChannel('/api/v1/channels/1e1/2');
    expect(notPlain.status).toBe(400);
    expect(notPlain.body.errors).toEqual([
      { path: '/path/siteId', message: 'must be an integer written in plain digits' },
    ]);
    const unknownQuery = await getChannel('/api/v1/channels/1/2?extra=1');
    expect(unknownQuery.status).toBe(400);
    expect(unknownQuery.body.errors.map((error: { path: string }) => error.path)).toEqual(['/query/extra']);
    expect(seen).toEqual([]);
  });

  test('authorization comes before validation on every request', async () => {
    expect((await getChannel('/api/v1/channels/1/2')).status).toBe(404);
    const anonymous = await app.request.get('/api/v1/channels/99999999999/2');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBeDefined();
    const wrongScope = await app.request
      .get('/api/v1/stl/site')
      .query({ siteId: 'not a number' })
      .set('X-SS-API-KEY', channelsOnly);
    expect(wrongScope.status).toBe(403);
  });

  test('HEAD on a GET operation stays a 405 after GETs of it', async () => {
    expect((await getChannel('/api/v1/channels/1/2')).status).toBe(404);
    const head = await app.request.head('/api/v1/channels/1/2').set('X-SS-API-KEY', key);
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe('GET');
  });

  test('unknown paths, other methods and operations without a handler keep their answers', async () => {
    const unknown = await app.request.get('/api/v1/channels/1/2/3').set('X-SS-API-KEY', key);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('There is no operation at GET /api/v1/channels/1/2/3');
    const method = await app.request.put('/api/v1/channels/1/2').set('X-SS-API-KEY', key);
    expect(method.status).toBe(405);
    expect(method.headers.allow).toBe('GET');
    for (let i = 0; i < 2; i++) {
      const missing = await app.request.get('/api/v1/stl/sites').set('X-SS-API-KEY', key);
      expect(missing.status).toBe(404);
      expect(missing.body.detail).toBe(
        'Operation stlListSites (GET /api/v1/stl/sites) is described in the contract but not implemented in this version',
      );
    }
  });
});

describe('the operation table', () => {
  // Only what the table reads of an operation: its method and path.
  const route = (method: string, path: string) => ({
    operation: { method, path } as ContractOperation,
    stages: [],
  });
  const table = new OperationTable([
    route('get', '/api/v1/contents/{siteId}/{channelId}/{id}'),
    route('post', '/api/v1/contents/{siteId}/{channelId}/batch'),
    route('post', '/api/v1/contents/{siteId}/{channelId}/{id}'),
    route('get', '/api/v1/ping'),
  ]);
  const matched = (method: string, path: string) => {
    const found = table.match(method, path);
    return found && { path: found.route.operation.path, params: found.params };
  };

  test('a path matches in any case, with one trailing slash, its parameters decoded', () => {
    expect(matched('GET', '/API/v1/Contents/1/2/caf%C3%A9')).toEqual({
      path: '/api/v1/contents/{siteId}/{channelId}/{id}',
      params: { siteId: '1', channelId: '2', id: 'café' },
    });
    expect(matched('GET', '/api/v1/ping/')?.path).toBe('/api/v1/ping');
    expect(matched('GET', '/api/v1/ping//')).toBeUndefined();
    expect(matched('GET', '/api/v1//ping')).toBeUndefined();
    expect(matched('GET', '/api/v1/contents/1//3')).toBeUndefined();
  });

  test('the first operation in the contract’s order wins; HEAD is served by GET', () => {
    expect(matched('POST', '/api/v1/contents/1/2/batch')?.path).toBe(
      '/api/v1/contents/{siteId}/{channelId}/batch',
    );
    expect(matched('POST', '/api/v1/contents/1/2/3')?.path).toBe(
      '/api/v1/contents/{siteId}/{channelId}/{id}',
    );
    expect(matched('HEAD', '/api/v1/ping')?.path).toBe('/api/v1/ping');
    expect(matched('DELETE', '/api/v1/ping')).toBeUndefined();
    expect(matched('GET', '/api/v1/ping/more')).toBeUndefined();
  });

  test('a parameter that cannot be decoded is a URIError of status 400, whatever the method', () => {
    for (const method of ['GET', 'PUT']) {
      let thrown: unknown;
      try {
        table.match(method, '/api/v1/contents/%/1/1');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(URIError);
      expect((thrown as { status?: number }).status).toBe(400);
    }
    expect(matched('GET', '/api/v1/no/such/%')).toBeUndefined();
  });
});

describe('the matched operation', () => {
  test('the app stages know it before they run; a path no operation takes, or one that cannot be decoded, has none', async () => {
    const named: (string | undefined)[] = [];
    const served = express();
    servePipeline(served, {
      before: [
        (req, _res, next) => {
          named.push(matchedOperation(req)?.operationId);
          next();
        },
      ],
      operations: new OperationTable([
        {
          operation: { method: 'get', path: '/a/{id}', operationId: 'getA' } as ContractOperation,
          stages: [(_req, res) => res.status(204).end()],
        },
      ]),
      unmatched: [(_req, res) => res.status(404).end()],
      // The undecodable path fails after the app stages, with the URIError's 400.
      onError: (error, _req, res, _next) => res.status((error as { status?: number }).status ?? 500).end(),
    });
    const statuses = [];
    for (const path of ['/a/1', '/A/2/', '/b', '/a/%'])
      statuses.push((await supertest(served).get(path)).status);
    expect(statuses).toEqual([204, 204, 404, 400]);
    expect(named).toEqual(['getA', 'getA', undefined, undefined]);
  });
});

describe('running stages', () => {
  const outcome = (stages: Parameters<typeof runStages>[0]) =>
    new Promise<{ error: unknown; ran: string[] }>((resolve) => {
      const ran: string[] = [];
      const req = { ran } as unknown as Parameters<typeof runStages>[1];
      runStages(stages, req, {} as Parameters<typeof runStages>[2], (error) => resolve({ error, ran }));
    });

  test('stages run in order; one that throws, rejects or passes an error ends the run with it', async () => {
    const mark =
      (name: string): Parameters<typeof runStages>[0][number] =>
      (req, _res, next) => {
        (req as unknown as { ran: string[] }).ran.push(name);
        next();
      };
    expect(await outcome([mark('a'), mark('b')])).toEqual({ error: undefined, ran: ['a', 'b'] });
    const thrown = new Error('thrown');
    expect(
      await outcome([
        mark('a'),
        () => {
          throw thrown;
        },
        mark('c'),
      ]),
    ).toEqual({ error: thrown, ran: ['a'] });
    const rejected = new Error('rejected');
    expect(await outcome([async () => Promise.reject(rejected), mark('b')])).toEqual({
      error: rejected,
      ran: [],
    });
    const passed = new Error('passed');
    expect(await outcome([(_req, _res, next) => next(passed), mark('b')])).toEqual({
      error: passed,
      ran: [],
    });
  });
});

describe('paths as clients write them', () => {
  test('another case and a trailing slash reach the same operation, with its parameters', async () => {
    seen.length = 0;
    expect((await getChannel('/API/V1/Channels/5/6/')).status).toBe(404);
    expect(seen).toEqual([{ siteId: 5, channelId: 6 }]);
  });

  test('a path that cannot be percent-decoded is a 400 on another method too', async () => {
    const response = await app.request.delete('/api/v1/channels/%/2').set('X-SS-API-KEY', key);
    expect(response.status).toBe(400);
    expect(response.body.detail).toBe('The path holds invalid percent-encoding');
  });
});

describe("the validator's stages in an operation's route", () => {
  type Stage = Parameters<typeof validationStages>[0][number];
  // With a body: its request stage keeps no verdict (below), and runs every time.
  const operation = { operationId: 'getChannel', method: 'get', hasBody: true } as ContractOperation;
  /** A stage of this name that records each run and fails while `failing` says so. */
  const stage = (name: string, runs: string[], failing: () => boolean = () => false): Stage => {
    const named = {
      [name]: (_req: unknown, _res: unknown, next: (error?: unknown) => void) => {
        runs.push(name);
        next(failing() ? new Error(`${name} failed`) : undefined);
      },
    };
    return named[name] as unknown as Stage;
  };
  const run = (stages: readonly Parameters<typeof runStages>[0][number][]) =>
    new Promise<unknown>((resolve) => {
      runStages(
        stages,
        { method: 'GET' } as Parameters<typeof runStages>[1],
        {} as Parameters<typeof runStages>[2],
        resolve,
      );
    });

  test('the path parameter stage runs until it has let a request through, then is passed by', async () => {
    const runs: string[] = [];
    let loaded = false;
    const stages = validationStages(
      [stage('pathParamsMiddleware', runs, () => !loaded), stage('requestMiddleware', runs)],
      { securityValidated: false },
    )(operation);
    expect(await run(stages)).toEqual(new Error('pathParamsMiddleware failed'));
    expect(await run(stages)).toEqual(new Error('pathParamsMiddleware failed'));
    loaded = true;
    expect(await run(stages)).toBeUndefined();
    expect(await run(stages)).toBeUndefined();
    expect(runs).toEqual([
      'pathParamsMiddleware',
      'pathParamsMiddleware',
      'pathParamsMiddleware',
      'requestMiddleware',
      'requestMiddleware',
    ]);
  });

  test('the security stage is left out unless the validator checks security', async () => {
    for (const securityValidated of [false, true]) {
      const runs: string[] = [];
      const stages = validationStages([stage('securityMiddleware', runs), stage('requestMiddleware', runs)], {
        securityValidated,
      })(operation);
      for (let i = 0; i < 2; i++) expect(await run(stages)).toBeUndefined();
      expect(runs).toEqual(
        securityValidated
          ? ['securityMiddleware', 'requestMiddleware', 'securityMiddleware', 'requestMiddleware']
          : ['requestMiddleware', 'requestMiddleware'],
      );
    }
  });
});

describe('verdicts kept for inputs the request stage let through', () => {
  type Stage = Parameters<typeof validationStages>[0][number];
  type Req = {
    method: string;
    url: string;
    headers: Record<string, unknown>;
    openapi?: unknown;
    query?: unknown;
  };
  /** A request stage that coerces as the validator does (digits to numbers) and refuses `bad`. */
  const requestStage = (runs: string[]): Stage => {
    const named = {
      requestMiddleware: (req: Req, _res: unknown, next: (error?: unknown) => void) => {
        runs.push(req.url);
        const query: Record<string, unknown> = Object.create(null);
        for (const [name, value] of new URL(req.url, 'http://x').searchParams)
          query[name] = /^\d+$/.test(value) ? Number(value) : value.split('|');
        Object.defineProperty(req, 'query', { writable: true, value: query });
        const { pathParams } = req.openapi as { pathParams: Record<string, unknown> };
        for (const name in pathParams) pathParams[name] = Number(pathParams[name]);
        if (typeof req.headers['x-count'] === 'string')
          req.headers['x-count'] = Number(req.headers['x-count']);
        next('bad' in query ? new Error('refused') : undefined);
      },
    };
    return named.requestMiddleware as unknown as Stage;
  };
  const operationOf = (parameters: [string, string][], more: Partial<ContractOperation> = {}) =>
    ({
      operationId: 'op',
      method: 'get',
      hasBody: false,
      multipartBody: false,
      parameters: new Map(parameters),
      ...more,
    }) as ContractOperation;
  const send = (stage: Parameters<typeof runStages>[0][number], url: string, more: Partial<Req> = {}) =>
    new Promise<{ error: unknown; req: Req }>((resolve) => {
      const req: Req = { method: 'GET', url, headers: {}, openapi: { pathParams: { id: '7' } }, ...more };
      runStages(
        [stage],
        req as unknown as Parameters<typeof runStages>[1],
        {} as Parameters<typeof runStages>[2],
        (error) => resolve({ error, req }),
      );
    });
  const stageFor = (operation: ContractOperation, runs: string[]) =>
    validationStages([requestStage(runs)], { securityValidated: false })(operation)[0] as Parameters<
      typeof runStages
    >[0][number];

  test('an input let through is validated once; later requests get copies of what it coerced', async () => {
    const runs: string[] = [];
    const stage = stageFor(
      operationOf([
        ['id', 'path'],
        ['n', 'query'],
        ['tags', 'query'],
      ]),
      runs,
    );
    const first = await send(stage, '/op/7?n=5&tags=a|b');
    expect(first.error).toBeUndefined();
    // A handler that changes its input changes nothing kept.
    (first.req.query as { tags: string[] }).tags.push('changed');
    const second = await send(stage, '/op/7?n=5&tags=a|b');
    expect(second.error).toBeUndefined();
    expect({ ...(second.req.query as object) }).toEqual({ n: 5, tags: ['a', 'b'] });
    expect(Object.getPrototypeOf(second.req.query)).toBeNull();
    expect(second.req.openapi).toEqual({ pathParams: { id: 7 } });
    expect(runs).toEqual(['/op/7?n=5&tags=a|b']);
    // Another URL is another input.
    await send(stage, '/op/7?n=6&tags=a|b');
    expect(runs).toHaveLength(2);
  });

  test('a refused input, an API key in the query, and another method are validated every time', async () => {
    const runs: string[] = [];
    const stage = stageFor(operationOf([['n', 'query']]), runs);
    for (let i = 0; i < 2; i++) {
      expect((await send(stage, '/op?bad=1')).error).toEqual(new Error('refused'));
      expect((await send(stage, '/op?n=1&apiKey=secret')).error).toBeUndefined();
      expect((await send(stage, '/op?n=2', { method: 'HEAD' })).error).toBeUndefined();
    }
    const each = ['/op?bad=1', '/op?n=1&apiKey=secret', '/op?n=2'];
    expect(runs).toEqual([...each, ...each]);
  });

  test('what an app keeps is bounded by weight, all operations together: the oldest go first', async () => {
    const runs: string[] = [];
    const stagesOf = validationStages([requestStage(runs)], { securityValidated: false });
    const stageOf = (operationId: string) =>
      stagesOf({
        ...operationOf([
          ['n', 'query'],
          ['pad', 'query'],
        ]),
        operationId,
      } as ContractOperation)[0] as Parameters<typeof runStages>[0][number];
    const first = stageOf('first');
    const second = stageOf('second');
    await send(first, '/first?n=1');
    await send(first, '/first?n=1');
    expect(runs).toHaveLength(1);
    // Another operation's 300 inputs of ~2,000 characters weigh more than the app keeps (1 << 20
    // units, each key twice): the first operation's input goes.
    const pad = 'p'.repeat(1_990);
    for (let n = 2; n < 302; n++) await send(second, `/second?n=${n}&pad=${pad}`);
    await send(first, '/first?n=1');
    expect(runs).toHaveLength(302);
    expect(runs.at(-1)).toBe('/first?n=1');
  });

  test('declared headers are part of the input; a body or a cookie parameter keeps nothing', async () => {
    const runs: string[] = [];
    const stage = stageFor(operationOf([['X-Count', 'header']]), runs);
    const first = await send(stage, '/op', { headers: { 'x-count': '3', other: 'a' } });
    const again = await send(stage, '/op', { headers: { 'x-count': '3', other: 'b' } });
    expect(again.req.headers).toEqual({ 'x-count': 3, other: 'b' });
    expect(first.req.headers['x-count']).toBe(3);
    await send(stage, '/op', { headers: { 'x-count': '4' } });
    await send(stage, '/op', { headers: {} });
    expect(runs).toHaveLength(3);
    for (const operation of [
      operationOf([], { hasBody: true }),
      operationOf([], { multipartBody: true }),
      operationOf([['session', 'cookie']]),
    ]) {
      const each: string[] = [];
      const unkept = stageFor(operation, each);
      for (let i = 0; i < 2; i++) await send(unkept, '/op?n=1');
      expect(each).toHaveLength(2);
    }
  });
});

describe("a safe operation's JSON body is part of the input whose verdict is kept", () => {
  type Body = Record<string, unknown>;
  /** Body texts the request stage saw; it fills a default as the validator does and refuses `bad`. */
  const runs: string[] = [];
  const requestMiddleware = (req: express.Request, _res: unknown, next: (error?: unknown) => void) => {
    const body = req.body as Body;
    runs.push(JSON.stringify(body));
    if ('bad' in body) return next(new Error('refused'));
    body.perPage ??= 30;
    next();
  };
  const appFor = (safe: boolean) => {
    const operation = {
      operationId: safe ? 'query' : 'write',
      method: 'post',
      hasBody: true,
      multipartBody: false,
      safe,
      access: { scopes: ['Contents'] },
      parameters: new Map(),
    } as unknown as ContractOperation;
    const [stage] = validationStages(
      [requestMiddleware as unknown as Parameters<typeof validationStages>[0][number]],
      {
        securityValidated: false,
      },
    )(operation);
    const served = express();
    served.post(
      '/op',
      operationBody(operation, (_req, _res, next) => next(), 1024),
      (req, _res, next) => {
        (req as { openapi?: unknown }).openapi = { pathParams: {} };
        next();
      },
      stage as express.RequestHandler,
      (req, res) => {
        res.json(req.body);
        // A handler that changes its input changes nothing kept.
        (req.body as Body).changed = true;
      },
    );
    served.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(400).json({ error: error.message });
    });
    return supertest(served);
  };
  const post = (target: ReturnType<typeof appFor>, text: string | Buffer, type = 'application/json') =>
    target.post('/op').set('Content-Type', type).send(text);

  test('the same text and media type is checked once; later requests get copies of what the stage left', async () => {
    runs.length = 0;
    const target = appFor(true);
    for (let i = 0; i < 3; i++) {
      const answer = await post(target, '{"siteId":1}');
      expect([answer.status, answer.body]).toEqual([200, { siteId: 1, perPage: 30 }]);
    }
    expect(runs).toEqual(['{"siteId":1}']);
    // Another text, even of the same value, and another Content-Type are other inputs.
    await post(target, '{ "siteId": 1 }');
    await post(target, '{"siteId":1}', 'application/json; charset=utf-8');
    await post(target, '{"siteId":2}');
    expect(runs).toEqual(['{"siteId":1}', '{"siteId":1}', '{"siteId":1}', '{"siteId":2}']);
  });

  test('a refused body, a body another reader took, and an operation that is not safe are checked every time', async () => {
    runs.length = 0;
    const safe = appFor(true);
    for (let i = 0; i < 2; i++) {
      const refused = await post(safe, '{"bad":1}');
      expect([refused.status, refused.body]).toEqual([400, { error: 'refused' }]);
      // A media type parameter readJson does not take: express.json reads it, and keeps no text.
      const other = await post(safe, '{"siteId":3}', 'application/json; charset=utf-8; q=1');
      expect([other.status, other.body]).toEqual([200, { siteId: 3, perPage: 30 }]);
    }
    const write = appFor(false);
    for (let i = 0; i < 2; i++)
      expect((await post(write, '{"siteId":4}')).body).toEqual({ siteId: 4, perPage: 30 });
    expect(runs).toEqual([
      '{"bad":1}',
      '{"siteId":3}',
      '{"bad":1}',
      '{"siteId":3}',
      '{"siteId":4}',
      '{"siteId":4}',
    ]);
  });
});
