import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { notFound } from '../../src/domain/errors.ts';
import type { Principal } from '../../src/domain/principal.ts';
import type { OperationContext } from '../../src/operations/types.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/*
 * What a handler receives: these handlers record their input and context and then answer 404,
 * which the contract allows for both operations.
 */

let app: TestApp;
let key: string;
let seen: { input: unknown; principal: Principal; context: OperationContext } | undefined;

beforeAll(async () => {
  app = await startTestApp({
    handlers: {
      getChannel: async (input, context) => {
        seen = { input, principal: input.principal, context };
        throw notFound('recorded');
      },
      stlGetSite: async (input, context) => {
        seen = { input, principal: input.principal, context };
        throw notFound('recorded');
      },
    },
  });
  key = await app.createApiKey(['Channels', 'STL']);
});
afterAll(() => app.close());

describe('operation input and context', () => {
  test('path parameters arrive coerced to the contract types', async () => {
    expect((await app.request.get('/api/v1/channels/12/34').set('X-SS-API-KEY', key)).status).toBe(404);
    expect(seen?.input).toMatchObject({
      path: { siteId: 12, channelId: 34 },
      query: {},
      header: {},
      cookie: {},
      body: undefined,
    });
  });

  test('query parameters arrive coerced, without the apiKey credential', async () => {
    expect(
      (await app.request.get('/api/v1/stl/site').query({ siteId: '5', siteDir: 'main', apiKey: key })).status,
    ).toBe(404);
    expect(seen?.input).toMatchObject({
      path: {},
      query: { siteId: 5, siteDir: 'main' },
      header: {},
      cookie: {},
      body: undefined,
    });
  });

  test('the context carries the database, provider, config, principal and a request logger', async () => {
    await app.request.get('/api/v1/channels/1/1').set('X-SS-API-KEY', key);
    const row = await app.db.apiKey.findFirstOrThrow({ orderBy: { id: 'desc' } });
    expect(seen?.principal).toEqual({
      kind: 'apiKey',
      apiKeyId: row.id,
      scopes: new Set(['Channels', 'STL']),
    });
    expect(seen?.context.db).toBe(app.db);
    expect(seen?.context.provider).toBe(app.provider);
    expect(seen?.context.config).toBe(app.services.config);
    expect(typeof seen?.context.log.info).toBe('function');
  });
});
