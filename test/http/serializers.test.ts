import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type supertest from 'supertest';
import { contract } from '../../src/contract.ts';
import { compileSerializer, responseSchemaOf } from '../../src/http/serializers.ts';
import { startSecondApp, type TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * Production serialises JSON responses with functions compiled from the contract's response
 * schemas (src/http/serializers.ts). They must compile for every JSON response (or production
 * would silently fall back to JSON.stringify) and must answer exactly what the validated
 * development path answers.
 */

let app: TestApp;
let key: string;
let production: supertest.Agent;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents']));
  // A second app over the same database, configured as production: no response validation,
  // compiled serialisers.
  production = (await startSecondApp(app, { config: { nodeEnv: 'production' } })).request;
});

afterAll(async () => {
  await app?.close();
});

test('every JSON response schema of the contract compiles to a serialiser', () => {
  const compiled: string[] = [];
  for (const operation of contract.operations) {
    for (const [status, mediaTypes] of operation.responses) {
      if (!mediaTypes.includes('application/json')) continue;
      const schema = responseSchemaOf(contract, operation.path, operation.method, status);
      expect(schema).toBeDefined();
      if (schema === undefined) continue;
      expect({
        at: `${operation.operationId} ${status}`,
        ok: compileSerializer(schema) !== undefined,
      }).toEqual({
        at: `${operation.operationId} ${status}`,
        ok: true,
      });
      compiled.push(`${operation.operationId} ${status}`);
    }
  }
  expect(compiled).toContain('listContents 200');
  expect(compiled).toContain('getContent 200');
});

describe('production answers what the validated path answers', () => {
  const cases = [
    {
      name: 'list contents',
      operationId: 'listContents',
      call: (agent: supertest.Agent) =>
        agent.post('/api/v1/contents').set('X-SS-API-KEY', key).send({ siteId: 1, perPage: 50 }),
    },
    {
      name: 'get content',
      operationId: 'getContent',
      call: (agent: supertest.Agent) => agent.get('/api/v1/contents/1/2/1').set('X-SS-API-KEY', key),
    },
  ];

  test.each(cases)('$name', async ({ operationId, call }) => {
    const validated = await call(app.request);
    expect(validated.status).toBe(200);
    const fast = await call(production);
    expect(fast.status).toBe(200);
    expect(fast.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(fast.text)).toEqual(validated.body);
    // The text is the compiled serialiser's, byte for byte (its property order is the schema's).
    const operation = contract.byId.get(operationId);
    if (operation === undefined) throw new Error(`${operationId} is not in the contract`);
    const schema = responseSchemaOf(contract, operation.path, operation.method, 200);
    const serialize = schema && compileSerializer(schema);
    expect(serialize).toBeDefined();
    expect(fast.text).toBe(serialize?.(validated.body));
  });
});

test('production sends a compiled body as res.send would: length, ETag, 304 when fresh', async () => {
  // A list: its ETag is express's weak one of the text (a record's own is its version's, strong).
  const path = '/api/v1/contents/1/recycle';
  const validated = await app.request.get(path).set('X-SS-API-KEY', key);
  const fast = await production.get(path).set('X-SS-API-KEY', key).set('Accept-Encoding', 'identity');
  expect(fast.status).toBe(200);
  expect(Number(fast.headers['content-length'])).toBe(Buffer.byteLength(fast.text));
  // Express's own weak ETag of the same bytes: what res.send computes.
  const express = (await import('express')).default;
  const etagOf = express().get('etag fn') as (body: Buffer) => string;
  expect(fast.headers.etag).toBe(etagOf(Buffer.from(fast.text)));
  expect(validated.headers.etag).toMatch(/^W\/"/);

  const fresh = await production
    .get(path)
    .set('X-SS-API-KEY', key)
    .set('If-None-Match', fast.headers.etag ?? '');
  expect(fresh.status).toBe(304);
  expect(fresh.text).toBe('');
  expect(fresh.headers['content-type']).toBeUndefined();
  const stale = await production.get(path).set('X-SS-API-KEY', key).set('If-None-Match', 'W/"other"');
  expect(stale.status).toBe(200);
  expect(stale.text).toBe(fast.text);
});
