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
 *
 * Per-operation policy lives in the contract too, as the `x-` extensions below (listed in
 * docs/contributing/architecture.md). The loader refuses a contract that breaks a rule, naming
 * every operation at fault, so `npm run gen:check` (which loads it) and every start fail alike:
 * above all an operation whose access is not explicit — neither public (`security: []`) nor scoped
 * nor limited by `x-principals`.
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
  access: { scopes: string[]; principals?: readonly PrincipalKind[] } | 'public';
  /**
   * `x-changes-credentials: true`: the operation may change a key or an account's ability to sign
   * in, so it advances the credentials generation before it answers (src/http/credentialCache.ts).
   */
  changesCredentials: boolean;
  /** `x-rate-limited: false`: the rate limiter lets every request of it through (src/http/rateLimit.ts). */
  rateLimited: boolean;
  /**
   * `x-idempotent: true`: a create whose retries with the same Idempotency-Key answer the first
   * result instead of creating again (src/http/idempotency.ts).
   */
  idempotent: boolean;
  /**
   * `x-safe: true`: a POST that changes nothing, its body a query (the content list): its body is
   * part of an input whose validation may be kept, as a GET's URL (src/http/validation.ts).
   */
  safe: boolean;
  /**
   * The status a handler's plain return is sent with: the operation's one 2xx response, or
   * `x-success-status` when it declares several.
   */
  successStatus: number;
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
  /**
   * The body is a `multipart/form-data` upload (its one media type): read as a stream within the
   * upload limit (src/http/bodies.ts), never as JSON.
   */
  multipartBody: boolean;
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

/** Who `x-principals` may name: the kinds of authenticated principal (src/domain/principal.ts). */
export const PRINCIPAL_KINDS = ['user', 'administrator', 'apiKey'] as const;
export type PrincipalKind = (typeof PRINCIPAL_KINDS)[number];

/**
 * The extensions an operation may carry; any other `x-` key is refused, so a misspelt one cannot
 * silently mean nothing.
 */
const OPERATION_EXTENSIONS = {
  'x-principals': z.array(z.enum(PRINCIPAL_KINDS)).min(1),
  'x-changes-credentials': z.boolean(),
  'x-rate-limited': z.boolean(),
  'x-success-status': z.number().int().min(200).max(299),
  'x-idempotent': z.boolean(),
  'x-safe': z.boolean(),
} as const;

/** The header an `x-idempotent` operation declares (components/parameters/IdempotencyKey). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

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
  'x-principals': OPERATION_EXTENSIONS['x-principals'].optional(),
  'x-changes-credentials': OPERATION_EXTENSIONS['x-changes-credentials'].default(false),
  'x-rate-limited': OPERATION_EXTENSIONS['x-rate-limited'].default(true),
  'x-success-status': OPERATION_EXTENSIONS['x-success-status'].optional(),
  'x-idempotent': OPERATION_EXTENSIONS['x-idempotent'].default(false),
  'x-safe': OPERATION_EXTENSIONS['x-safe'].default(false),
});
const pathItemSchema = z.looseObject({ parameters: z.array(parameterSchema).default([]) });
const securitySchemeSchema = z.looseObject({ type: z.string(), scheme: z.string().optional() });
const documentSchema = z.looseObject({
  security: securitySchema.default([]),
  paths: z.record(z.string(), z.looseObject({})).default({}),
  components: z
    .looseObject({ securitySchemes: z.record(z.string(), securitySchemeSchema).default({}) })
    .default({ securitySchemes: {} }),
});

/** The kinds of principal a security scheme can authenticate: an API key, or a login's bearer token. */
function principalsOfScheme(scheme: z.infer<typeof securitySchemeSchema>): readonly PrincipalKind[] {
  if (scheme.type === 'apiKey') return ['apiKey'];
  if (scheme.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer') return ['user', 'administrator'];
  return [];
}

type OperationObject = z.infer<typeof operationSchema>;

/** Thrown for a contract that breaks the rules above; lists every problem found, not just the first. */
export class ContractError extends Error {
  override name = 'ContractError';

  constructor(
    file: string,
    readonly problems: readonly string[],
  ) {
    super(
      `${file} breaks the contract rules (docs/contributing/architecture.md):\n  ${problems.join('\n  ')}`,
    );
  }
}

/**
 * Access as the operation states it. It must state it itself: an operation without `security`
 * would inherit the document's, whose requirements list no scope — "any credentials at all", user
 * tokens included — which nobody ever decides on purpose.
 */
function accessOf(
  operation: OperationObject,
  schemes: Readonly<Record<string, z.infer<typeof securitySchemeSchema>>>,
  problems: string[],
): ContractOperation['access'] {
  const { security, 'x-principals': principals } = operation;
  if (security === undefined) {
    problems.push(
      'has no `security` of its own: write `security: []` for a public operation, or list the schemes with the scopes it needs',
    );
    return { scopes: [], principals: [] };
  }
  // `{}` among the alternatives: credentials are optional, so the operation is public (and checks
  // the credentials presented: acceptsCredentials).
  if (security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0)) {
    if (principals !== undefined) problems.push('is public, so `x-principals` means nothing');
    return 'public';
  }
  const reachable = new Set<PrincipalKind>();
  for (const name of new Set(security.flatMap((requirement) => Object.keys(requirement)))) {
    const scheme = schemes[name];
    if (scheme === undefined) problems.push(`names ${name}, which is not a security scheme of the contract`);
    else for (const kind of principalsOfScheme(scheme)) reachable.add(kind);
  }
  for (const kind of principals ?? []) {
    if (!reachable.has(kind))
      problems.push(`x-principals names ${kind}, which none of its security schemes admits`);
  }
  const alternatives = security.map((requirement) => [...new Set(Object.values(requirement).flat())].sort());
  const [first, ...others] = alternatives as [string[], ...string[][]];
  if (others.some((scopes) => scopes.join(',') !== first.join(','))) {
    problems.push('every security alternative must list the same scopes');
  }
  if (first.length === 0 && principals === undefined) {
    problems.push(
      'is neither public (`security: []`) nor scoped: list the scopes it needs, or name who may call it with `x-principals`',
    );
    return { scopes: [], principals: [] };
  }
  return principals === undefined ? { scopes: first } : { scopes: first, principals };
}

export const MULTIPART_FORM_DATA = 'multipart/form-data';

/** The media types a request body may come as (none without a body). */
function bodyMediaTypes(requestBody: unknown): string[] {
  const content: unknown =
    typeof requestBody === 'object' && requestBody !== null ? Reflect.get(requestBody, 'content') : undefined;
  return typeof content === 'object' && content !== null ? Object.keys(content) : [];
}

/** The status of a plain return: the one declared 2xx, or `x-success-status` among several. */
function successStatusOf(
  operation: OperationObject,
  responses: ReadonlyMap<number, unknown>,
  problems: string[],
) {
  const successes = [...responses.keys()].filter((status) => status >= 200 && status < 300).sort();
  const stated = operation['x-success-status'];
  if (stated !== undefined) {
    if (!successes.includes(stated)) problems.push(`x-success-status ${stated} is not one of its responses`);
    return stated;
  }
  if (successes.length !== 1) {
    problems.push(
      successes.length === 0
        ? 'declares no 2xx response'
        : `declares ${successes.join(', ')}: say which one a plain return means with \`x-success-status\``,
    );
  }
  return successes[0] ?? 200;
}

/**
 * What `x-idempotent` needs: a POST (the method that creates), a caller to scope keys to (not a
 * public operation), the Idempotency-Key header, and the statuses the middleware answers with.
 */
function idempotencyProblems(
  method: HttpMethod,
  access: ContractOperation['access'],
  parameters: ReadonlyMap<string, ParameterLocation>,
  responses: ReadonlyMap<number, unknown>,
): string[] {
  const problems: string[] = [];
  if (method !== 'post') problems.push('is x-idempotent but not a POST');
  if (access === 'public') problems.push('is x-idempotent but public: keys are scoped to the caller');
  if (parameters.get(IDEMPOTENCY_KEY_HEADER) !== 'header') {
    problems.push(`is x-idempotent but does not declare the ${IDEMPOTENCY_KEY_HEADER} header`);
  }
  for (const status of [400, 409, 422, 503]) {
    if (!responses.has(status)) problems.push(`is x-idempotent but does not declare a ${status} response`);
  }
  return problems;
}

/**
 * What `x-safe` needs: a POST (a GET is safe by its method) whose body is JSON, which neither
 * creates nor changes credentials.
 */
function safetyProblems(operation: OperationObject, method: HttpMethod): string[] {
  const problems: string[] = [];
  if (method !== 'post') problems.push('is x-safe but not a POST (other methods say what they do)');
  const types = bodyMediaTypes(operation.requestBody);
  if (types.length === 0 || types.includes(MULTIPART_FORM_DATA))
    problems.push('is x-safe but has no JSON body (its body is the query it asks)');
  if (operation['x-idempotent']) problems.push('is x-safe but x-idempotent (a create changes something)');
  if (operation['x-changes-credentials']) problems.push('is x-safe but x-changes-credentials');
  return problems;
}

/** `x-` keys the loader does not know, on an operation or its path item. */
function unknownExtensions(object: Record<string, unknown>, known: ReadonlySet<string>): string[] {
  return Object.keys(object).filter((key) => key.startsWith('x-') && !known.has(key));
}

const KNOWN_OPERATION_EXTENSIONS: ReadonlySet<string> = new Set(Object.keys(OPERATION_EXTENSIONS));
const NO_EXTENSIONS: ReadonlySet<string> = new Set();

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
    .join('; ');
}

/**
 * Reads a contract: from the cache file when it holds this very text, parsed from the file
 * otherwise (a cache left by an older build is never used for a changed contract). Throws a
 * ContractError when it breaks a rule.
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
  const problems: string[] = [];
  for (const [path, rawItem] of Object.entries(document.paths)) {
    const item = pathItemSchema.parse(rawItem);
    for (const key of unknownExtensions(rawItem, NO_EXTENSIONS)) {
      problems.push(`${path}: unknown extension ${key} (extensions go on operations)`);
    }
    for (const method of HTTP_METHODS) {
      const raw = rawItem[method];
      if (raw === undefined) continue;
      const id =
        typeof raw === 'object' && raw !== null && 'operationId' in raw ? String(raw.operationId) : '?';
      const where = `${id} (${method.toUpperCase()} ${path})`;
      const local: string[] = [];
      if (typeof raw === 'object' && raw !== null) {
        for (const key of unknownExtensions(raw as Record<string, unknown>, KNOWN_OPERATION_EXTENSIONS)) {
          local.push(`unknown extension ${key} (known: ${[...KNOWN_OPERATION_EXTENSIONS].join(', ')})`);
        }
      }
      const parsed = operationSchema.safeParse(raw);
      if (!parsed.success) {
        problems.push(...local.map((problem) => `${where} ${problem}`));
        problems.push(`${where} is not a valid operation: ${describeIssues(parsed.error)}`);
        continue;
      }
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
      const access = accessOf(operation, document.components.securitySchemes, local);
      const successStatus = successStatusOf(operation, responses, local);
      const idempotent = operation['x-idempotent'];
      if (idempotent) local.push(...idempotencyProblems(method, access, parameters, responses));
      if (!idempotent && parameters.has(IDEMPOTENCY_KEY_HEADER)) {
        local.push(`declares the ${IDEMPOTENCY_KEY_HEADER} header but is not x-idempotent`);
      }
      const safe = operation['x-safe'];
      if (safe) local.push(...safetyProblems(operation, method));
      problems.push(...local.map((problem) => `${where} ${problem}`));
      operations.push({
        operationId: operation.operationId,
        tags: operation.tags,
        method,
        path,
        access,
        changesCredentials: operation['x-changes-credentials'],
        rateLimited: operation['x-rate-limited'],
        idempotent,
        safe,
        successStatus,
        acceptsCredentials:
          access === 'public' &&
          (operation.security ?? []).some((requirement) => Object.keys(requirement).length > 0),
        parameters,
        integerParameters,
        hasBody: operation.requestBody !== undefined,
        multipartBody: bodyMediaTypes(operation.requestBody).includes(MULTIPART_FORM_DATA),
        responses,
      });
    }
  }
  if (problems.length > 0) throw new ContractError(file, problems);
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
