import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { deserialize, serialize } from 'node:v8';
import { $RefParser } from '@apidevtools/json-schema-ref-parser';
import { z } from 'zod';
import { fromRoot } from './projectRoot.ts';

/*
 * The operations of openapi/cms.yaml, read at run time: routes are mounted, access is decided and
 * field errors are located from the contract, so a path, method, scope or parameter is never
 * written twice. Request validation reads the same file itself.
 */

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const PARAMETER_LOCATIONS = ['path', 'query', 'header', 'cookie'] as const;
export type ParameterLocation = (typeof PARAMETER_LOCATIONS)[number];

export interface ContractOperation {
  operationId: string;
  /** The operation's tags (e.g. `apiKeys`). */
  tags: readonly string[];
  method: HttpMethod;
  /** The contract's path template, e.g. `/api/v1/contents/{siteId}`. */
  path: string;
  /**
   * The scopes a caller needs, or 'public' for `security: []`. Every alternative of an operation
   * (header key, query key, bearer token) must list the same scopes; the loader refuses a
   * contract where they differ, since access is decided once, whatever the credential.
   */
  access: { scopes: string[] } | 'public';
  /**
   * A public operation that also lists credentials (`security: [{}, {ApiKeyHeader: []}, ...]`):
   * credentials presented are checked (401 when they are not good) and the handler sees who called.
   */
  acceptsCredentials: boolean;
  /** Declared parameters by name: where the operation takes each one. */
  parameters: ReadonlyMap<string, ParameterLocation>;
  /** Path and query parameters whose schema is an integer (read as plain digits only). */
  integerParameters: readonly { name: string; in: 'path' | 'query' }[];
  hasBody: boolean;
  /** Media types of each declared response status (e.g. 200 → ['image/png']). */
  responses: ReadonlyMap<number, readonly string[]>;
}

export interface Contract {
  /** File the validator loads. */
  file: string;
  /** The document as written (with its $refs), for serving it. */
  document: Record<string, unknown>;
  /**
   * The same document with every $ref replaced by what it points to (the contract has no circular
   * references). Shared: treat as read-only; the validator gets its own copy.
   */
  resolved: Record<string, unknown>;
  operations: ContractOperation[];
  byId: ReadonlyMap<string, ContractOperation>;
  /** Read from the build's cache (CONTRACT_CACHE_FILE) rather than parsed from the YAML. */
  fromCache: boolean;
}

export const CONTRACT_FILE = fromRoot('openapi', 'cms.yaml');

/**
 * The contract as parsed and resolved, written by `npm run build` (scripts/contractCache.ts) next
 * to the compiled code. Parsing the YAML and resolving its $refs is a large part of a start;
 * reading this file is not (bench/RUNTIME.md, "Start-up"). It is V8's serialisation (what
 * structuredClone uses), which keeps the resolved document's shared parts shared (as JSON they
 * would be written out again at every reference).
 */
export const CONTRACT_CACHE_FILE = fromRoot('dist', 'openapi', 'cms.contract.bin');

interface ParsedContract {
  /** Which YAML text (and Node version: the serialisation is V8's) this was made from. */
  key: string;
  document: Record<string, unknown>;
  resolved: Record<string, unknown>;
}

function cacheKey(text: string): string {
  return createHash('sha256').update(process.version).update('\0').update(text).digest('hex');
}

async function parseContract(file: string, text: string): Promise<ParsedContract> {
  const document = (await $RefParser.parse(file)) as Record<string, unknown>;
  // Resolved on a copy: parameters and responses are mostly $refs to components.
  const resolved = (await $RefParser.dereference(structuredClone(document))) as Record<string, unknown>;
  return { key: cacheKey(text), document, resolved };
}

/** The cached parse of this exact text, if the cache file holds it (anything else is ignored). */
function cachedContract(cacheFile: string, text: string): ParsedContract | undefined {
  let cached: Partial<ParsedContract>;
  try {
    cached = deserialize(readFileSync(cacheFile)) as Partial<ParsedContract>;
  } catch {
    return undefined; // absent (development, tests before a build) or unreadable
  }
  if (cached.key !== cacheKey(text) || cached.document === undefined || cached.resolved === undefined) {
    return undefined;
  }
  return cached as ParsedContract;
}

/** Parses a contract file and writes the cache loadContract reads (`npm run build`). */
export async function writeContractCache(
  file: string = CONTRACT_FILE,
  cacheFile: string = CONTRACT_CACHE_FILE,
): Promise<void> {
  writeFileSync(cacheFile, serialize(await parseContract(file, readFileSync(file, 'utf8'))));
}

const securitySchema = z.array(z.record(z.string(), z.array(z.string())));
const parameterSchema = z.looseObject({
  name: z.string(),
  in: z.enum(PARAMETER_LOCATIONS),
  schema: z.looseObject({ type: z.unknown().optional() }).optional(),
});
const responseSchema = z.looseObject({ content: z.record(z.string(), z.unknown()).optional() });
const operationSchema = z.looseObject({
  operationId: z.string().min(1),
  tags: z.array(z.string()).default([]),
  security: securitySchema.optional(),
  parameters: z.array(parameterSchema).default([]),
  requestBody: z.unknown().optional(),
  responses: z.record(z.string(), responseSchema).default({}),
});
const pathItemSchema = z.looseObject({ parameters: z.array(parameterSchema).default([]) });
const documentSchema = z.looseObject({
  security: securitySchema.default([]),
  paths: z.record(z.string(), z.looseObject({})).default({}),
});

type Security = z.infer<typeof securitySchema>;

function accessOf(security: Security, where: string): ContractOperation['access'] {
  // `{}` among the alternatives: credentials are optional, so the operation is public.
  if (security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0)) {
    return 'public';
  }
  const alternatives = security.map((requirement) => [...new Set(Object.values(requirement).flat())].sort());
  const [first, ...others] = alternatives as [string[], ...string[][]];
  if (others.some((scopes) => scopes.join(',') !== first.join(','))) {
    throw new Error(`${where}: every security alternative must list the same scopes`);
  }
  return { scopes: first };
}

function accessAndCredentials(security: Security, where: string) {
  const access = accessOf(security, where);
  const listsCredentials = security.some((requirement) => Object.keys(requirement).length > 0);
  return { access, acceptsCredentials: access === 'public' && listsCredentials };
}

/**
 * Reads a contract: from the cache file when it holds this very text, parsed from the file
 * otherwise (a cache left by an older build is never used for a changed contract).
 */
export async function loadContract(
  file: string = CONTRACT_FILE,
  /** null: parse the file, whatever cache there is. */
  cacheFile: string | null = file === CONTRACT_FILE ? CONTRACT_CACHE_FILE : null,
): Promise<Contract> {
  const text = readFileSync(file, 'utf8');
  const cached = cacheFile === null ? undefined : cachedContract(cacheFile, text);
  const { document: written, resolved } = cached ?? (await parseContract(file, text));
  const document = documentSchema.parse(resolved);
  const operations: ContractOperation[] = [];
  for (const [path, rawItem] of Object.entries(document.paths)) {
    const item = pathItemSchema.parse(rawItem);
    for (const method of HTTP_METHODS) {
      if (rawItem[method] === undefined) continue;
      const where = `${method.toUpperCase()} ${path} in ${file}`;
      const parsed = operationSchema.safeParse(rawItem[method]);
      if (!parsed.success) throw new Error(`${where} is not a valid operation (it needs an operationId)`);
      const operation = parsed.data;
      const parameters = new Map<string, ParameterLocation>();
      const integerParameters: ContractOperation['integerParameters'][number][] = [];
      for (const parameter of [...item.parameters, ...operation.parameters]) {
        parameters.set(parameter.name, parameter.in);
        if (parameter.schema?.type === 'integer' && (parameter.in === 'path' || parameter.in === 'query')) {
          integerParameters.push({ name: parameter.name, in: parameter.in });
        }
      }
      const responses = new Map<number, string[]>();
      for (const [status, response] of Object.entries(operation.responses)) {
        if (/^\d{3}$/.test(status)) responses.set(Number(status), Object.keys(response.content ?? {}));
      }
      operations.push({
        operationId: operation.operationId,
        tags: operation.tags,
        method,
        path,
        ...accessAndCredentials(operation.security ?? document.security, where),
        parameters,
        integerParameters,
        hasBody: operation.requestBody !== undefined,
        responses,
      });
    }
  }
  return {
    file,
    document: written,
    resolved,
    operations,
    byId: new Map(operations.map((operation) => [operation.operationId, operation])),
    fromCache: cached !== undefined,
  };
}

/** The service's own contract, loaded once when this module is first imported. */
export const contract: Contract = await loadContract();
