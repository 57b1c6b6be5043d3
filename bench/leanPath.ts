/**
 * The ceiling of a request path without express's stages, for listContents (issue 20 §2): the
 * service's own pieces — its configuration and services (src/compose.ts), the Authenticator with
 * the API key as src/http/app.ts makes it, the access check, ajv on the contract's request body,
 * the domain's listContents, the response serialiser compiled from the contract — behind bare
 * node:http. It has none of the service's other stages (request id and logging, CORS, rate limit,
 * body bounds and NUL check, the validator's parameters, ETag, compression, problem answers): what
 * it costs a request against the service's and floor R's says how much of the service's cost is
 * those stages and express, and how much its own work (bench/README.md, "What the service's own
 * work costs without express").
 * Usage: the service's environment (DATABASE_URL, NODE_ENV=production…) and PORT, then
 * `node --import tsx bench/leanPath.ts`; loaded like the service (autocannon, POST
 * /api/v1/contents with the list's JSON body and the X-SS-API-KEY header).
 */

import { createServer } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Request } from 'express';
import pino from 'pino';
import { composeServices } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';
import { contract } from '../src/contract.ts';
import { assertMayCall } from '../src/domain/access.ts';
import { type ListContentsRequest, listContents } from '../src/domain/contents/list.ts';
import { JsonText } from '../src/domain/jsonText.ts';
import { serviceAuthenticator } from '../src/http/app.ts';
import { KnownCredentials } from '../src/http/auth.ts';
import { operationSerializers } from '../src/http/serializers.ts';

const config = loadConfig();
const logger = pino({ level: 'warn' });
const services = await composeServices(config, logger);
const authenticator = serviceAuthenticator({ ...services, logger }, new KnownCredentials());
const operation = contract.operations.find((candidate) => candidate.operationId === 'listContents');
if (operation === undefined) throw new Error('no listContents in the contract');
type Document = {
  paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: object }> } }>>;
};
const paths = (contract.resolved as Document).paths;
const bodySchema = paths[operation.path]?.[operation.method]?.requestBody.content['application/json']?.schema;
if (bodySchema === undefined) throw new Error('listContents has no JSON body schema');
const ajv = new Ajv2020({ strict: false });
(addFormatsModule as unknown as { default: (ajv: Ajv2020) => void }).default(ajv);
const validate = ajv.compile(bodySchema);
const serialize = operationSerializers(contract, operation.path, operation.method)(200);
if (serialize === undefined) throw new Error('listContents has no compiled serialiser');

createServer(async (req, res) => {
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const principal = await authenticator.authenticate(req as Request);
    assertMayCall(operation.access, principal, operation.operationId);
    if (!validate(body)) {
      res.writeHead(400).end();
      return;
    }
    const page = await listContents(services, body as ListContentsRequest, config.maxPerPage);
    // A page of selected fields may come as its kept text (src/domain/contents/pageTexts.ts).
    const text = page instanceof JsonText ? page.bytes : serialize(page);
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    res.writeHead(500).end();
  }
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
