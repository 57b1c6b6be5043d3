import { readFileSync } from 'node:fs';
import { Router } from 'express';
import type { Contract } from './contract.ts';

/*
 * Routes that are not operations of the contract — the contract itself now; the docs page and
 * metrics next — live here, in one router mounted ahead of rate limiting, authorization and the
 * validator, so they neither fall into the validator's "no such operation" 404 nor need exceptions
 * inside it. Add a route here, not in app.ts, and list it in the README.
 */
export function serviceRoutes(contract: Contract): Router {
  const router = Router();
  const yaml = readFileSync(contract.file, 'utf8');
  const json = JSON.stringify(contract.document);
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(yaml);
  });
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(json);
  });
  return router;
}
