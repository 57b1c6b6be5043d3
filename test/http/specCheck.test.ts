import { describe, expect, jest, test } from '@jest/globals';
import express from 'express';
import { middleware as openApiValidator } from 'express-openapi-validator';
import supertest from 'supertest';
import { currentSpecValidator, deferSpecValidator } from '../../src/http/specCheck.ts';

/*
 * src/http/specCheck.ts defers express-openapi-validator's compilation of the OpenAPI meta-schema
 * to the first document check. The check itself must be unchanged: an invalid document is still
 * refused when the check is on, a valid one still passes.
 */

const valid = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: { '/ok': { get: { responses: { '200': { description: 'ok' } } } } },
};
// `info` is required by the OpenAPI schema; `paths` entries must start with a slash.
const invalid = { openapi: '3.1.0', paths: { ok: { get: { responses: { '200': { description: 'ok' } } } } } };

describe('the deferred OpenAPI document check', () => {
  test('replaces the validator class once, and stays in place', () => {
    expect(deferSpecValidator()).toBe(true);
    const deferred = currentSpecValidator();
    expect(deferred.name).toBe('DeferredSpecValidator');
    expect(deferSpecValidator()).toBe(true);
    expect(currentSpecValidator()).toBe(deferred);
  });

  test('still finds what is wrong with a document, and nothing in a valid one', () => {
    deferSpecValidator();
    const Validator = currentSpecValidator();
    const check = new Validator({ version: '3.1.0', validateApiSpec: true });
    const { errors } = check.validate(invalid);
    expect(errors.length).toBeGreaterThan(0);
    expect(JSON.stringify(errors)).toContain('info');
    expect(check.validate(valid).errors).toEqual([]);
  });

  test('the validator still refuses an invalid document when the check is on, and serves a valid one', async () => {
    deferSpecValidator();
    const appOf = (apiSpec: object, validateApiSpec: boolean) => {
      const app = express();
      app.use(openApiValidator({ apiSpec: structuredClone(apiSpec) as never, validateApiSpec }));
      app.get('/ok', (_req, res) => {
        res.json({ ok: true });
      });
      app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
        res.status(599).json({ message: error.message });
      });
      return app;
    };
    // The validator prints the document's errors to the console before refusing it.
    const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const refused = await supertest(appOf(invalid, true)).get('/ok');
    expect(printed).toHaveBeenCalled();
    printed.mockRestore();
    expect(refused.status).toBe(599);
    expect(refused.body.message).toContain('apiDoc was invalid');
    const served = await supertest(appOf(valid, true)).get('/ok');
    expect(served.status).toBe(200);
    expect(served.body).toEqual({ ok: true });
    // Unchecked (production), the same invalid document is not looked at.
    const unchecked = await supertest(appOf({ ...invalid, paths: valid.paths }, false)).get('/ok');
    expect(unchecked.status).toBe(200);
  });
});
