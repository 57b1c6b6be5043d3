/*
 * The typed client of the CMS service (published as @cms/client): openapi-fetch over the `paths`
 * generated from openapi/cms.yaml, so a path, parameter, request body or response field that is not
 * in the contract fails to compile. The service's own tests use it, so the client is exercised on
 * every run.
 *
 * The package carries its own copy of the generated types (./generated/openapi.ts, written by the
 * service's `npm run gen` and checked by `npm run gen:check`): a consumer installs one tarball and
 * needs nothing of the service's source. The import says `.js` because that is the file a
 * consumer's TypeScript finds next to dist/index.d.ts; the type-only import is erased at run time.
 */
import createClient, {
  type Client,
  type FetchResponse,
  type MaybeOptionalInit,
  type Middleware,
  type ParseAs,
} from 'openapi-fetch';
import type { components, operations, paths } from './generated/openapi.js';

export type { components, operations, paths };

type Schemas = components['schemas'];
/** A content as the service answers it (form A). */
export type Content = Schemas['Content'];
/** A content answered with `fields`: only the fields asked for. */
export type ContentSelection = Schemas['ContentSelection'];
export type ListContentsRequest = Schemas['ListContentsRequest'];
export type ListContentsResponse = Schemas['ListContentsResponse'];
/** A filter rule of a list: `{ column, operator?, value }` (operator `=` when left out). */
export type Where = Schemas['Where'];
/** A sort rule of a list: `{ column, desc }`. */
export type Order = Schemas['Order'];
/** A partial update: only the fields present change. */
export type UpdateContentRequest = Schemas['UpdateContentRequest'];
/** What a delete answers: the content as it went to the recycle bin (form B). */
export type DeletedContent = Schemas['DeleteContentResponse']['value'];

/** Every error body is RFC 9457 problem+json; `type` is a stable URI to branch on. */
export type Problem = components['schemas']['Problem'];
export type ProblemType = Problem['type'];
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
type PathsWith<M extends HttpMethod> = {
  [P in keyof paths]: paths[P] extends Record<M, object> ? P : never;
}[keyof paths];
type Operation<P extends keyof paths, M extends HttpMethod> =
  paths[P] extends Record<M, infer O extends Record<string | number, unknown>> ? O : never;
type Init<P extends keyof paths, M extends HttpMethod, A extends ParseAs> = MaybeOptionalInit<paths[P], M> & {
  parseAs?: A;
};
/** The options argument may be left out when nothing in it is required (no path parameter, no body). */
type InitArgument<P extends keyof paths, M extends HttpMethod, A extends ParseAs> =
  undefined extends MaybeOptionalInit<paths[P], M> ? [init?: Init<P, M, A>] : [init: Init<P, M, A>];

/*
 * openapi-fetch infers its options argument as a type parameter, which turns off TypeScript's
 * excess-property check: a misspelt optional body field (`channelID`) compiles (openapi-typescript
 * issues #1769 and #2329). Here the argument's type is computed from the path and method alone, so
 * a fresh object literal is checked against the contract, nested objects included. Only `parseAs`
 * stays inferred, because the response body's type depends on it.
 */
type StrictMethod<M extends HttpMethod> = <P extends PathsWith<M>, A extends ParseAs = 'json'>(
  url: P,
  ...init: InitArgument<P, M, A>
) => Promise<FetchResponse<Operation<P, M>, { parseAs: A }, `${string}/${string}`>>;

type Methods = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'PATCH' | 'TRACE' | 'request';

export type CmsClient = Omit<Client<paths>, Methods> & {
  GET: StrictMethod<'get'>;
  POST: StrictMethod<'post'>;
};

/** An API key (header X-SS-API-KEY), or an access token from a login (Authorization: Bearer), or neither. */
export type CmsCredentials =
  | { apiKey: string; bearerToken?: undefined }
  | { bearerToken: string; apiKey?: undefined }
  | { apiKey?: undefined; bearerToken?: undefined };

export type CmsClientOptions = CmsCredentials & {
  /** Where the service answers, e.g. `https://cms.example` (paths start with /api/v1). */
  baseUrl: string;
  /** A fetch of your own (tests, proxies); defaults to the global fetch. */
  fetch?: (request: Request) => Promise<Response>;
};

/** A header the request sets itself wins: one client can still send another credential once. */
function credentialMiddleware(name: string, value: string): Middleware {
  return {
    onRequest({ request }) {
      if (!request.headers.has(name)) request.headers.set(name, value);
      return request;
    },
  };
}

export function createCmsClient(options: CmsClientOptions): CmsClient {
  const { baseUrl, apiKey, bearerToken, fetch } = options;
  if (apiKey !== undefined && bearerToken !== undefined)
    throw new TypeError('createCmsClient takes an apiKey or a bearerToken, not both');
  const client = createClient<paths>({ baseUrl, ...(fetch === undefined ? {} : { fetch }) });
  if (apiKey !== undefined) client.use(credentialMiddleware('X-SS-API-KEY', apiKey));
  if (bearerToken !== undefined) client.use(credentialMiddleware('Authorization', `Bearer ${bearerToken}`));
  // The same object; only the call signatures are stricter (see StrictMethod).
  return client as unknown as CmsClient;
}

/** True for a problem+json body: for errors that reach code without their response's types. */
export function isProblem(value: unknown): value is Problem {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  return (
    typeof body.type === 'string' &&
    typeof body.title === 'string' &&
    typeof body.status === 'number' &&
    typeof body.detail === 'string'
  );
}

/**
 * A request the service answered with an error: `problem` is its problem+json body (RFC 9457), so
 * code can branch on `type`, a stable URI, and show `detail` to people.
 */
export class CmsProblemError extends Error {
  override readonly name = 'CmsProblemError';
  readonly status: number;
  readonly problem: Problem;

  constructor(status: number, problem: Problem) {
    super(`${status} ${problem.title}: ${problem.detail}`);
    this.status = status;
    this.problem = problem;
  }

  get type(): ProblemType {
    return this.problem.type;
  }
}

/**
 * An error response whose body is not problem+json, so not the service's own answer (a proxy's
 * error page, a gateway timeout). The body is not kept: it may be large, and it is not the API's.
 */
export class CmsResponseError extends Error {
  override readonly name = 'CmsResponseError';
  readonly status: number;
  readonly contentType: string | null;

  constructor(response: Response) {
    super(`${response.status} ${response.statusText || 'error'} (not a problem+json answer)`);
    this.status = response.status;
    this.contentType = response.headers.get('content-type');
  }
}

/** The success body, or the failure as a thrown CmsProblemError / CmsResponseError. */
async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok && data !== undefined) return data;
  if (isProblem(error)) throw new CmsProblemError(response.status, error);
  throw new CmsResponseError(response);
}

/** Where a content lives: its site, its channel and its own id (all three are in its URL). */
export interface ContentRef {
  siteId: number;
  channelId: number;
  id: number;
}

function contentPath({ siteId, channelId, id }: ContentRef) {
  return { params: { path: { siteId, channelId, id } } };
}

/*
 * Helpers for the common calls. Each takes a client made by createCmsClient, answers the success
 * body and throws CmsProblemError for an error (scope missing, record not found, a rule broken),
 * so callers write the happy path. The argument types are the contract's request schemas, so a
 * misspelt field of a literal fails to compile. For anything else, call client.GET / client.POST.
 */

/** A page asked for without `fields`: every content whole. */
export type WholeContentsPage = Omit<ListContentsResponse, 'contents'> & { contents: Content[] };

/**
 * One page of the contents matching every filter, with the count of all matches: whole records,
 * or only the `fields` asked for.
 */
export function listContents(
  client: CmsClient,
  request: ListContentsRequest & { fields?: undefined },
): Promise<WholeContentsPage>;
export function listContents(client: CmsClient, request: ListContentsRequest): Promise<ListContentsResponse>;
export function listContents(client: CmsClient, request: ListContentsRequest): Promise<ListContentsResponse> {
  return unwrap(client.POST('/api/v1/contents', { body: request }));
}

/** One content (404 as a CmsProblemError when it does not exist or is in the recycle bin). */
export function getContent(client: CmsClient, ref: ContentRef): Promise<Content> {
  // Asked without `fields`, the answer is the whole record (the first of the answer's two forms).
  return unwrap(
    client.GET('/api/v1/contents/{siteId}/{channelId}/{id}', contentPath(ref)),
  ) as Promise<Content>;
}

/** Changes the fields present in `changes`; answers the whole content with the new values. */
export function updateContent(
  client: CmsClient,
  ref: ContentRef,
  changes: UpdateContentRequest,
): Promise<Content> {
  return unwrap(
    client.POST('/api/v1/contents/{siteId}/{channelId}/{id}/actions/update', {
      ...contentPath(ref),
      body: changes,
    }),
  );
}

/** Moves a content to the recycle bin; answers it as it was (form B). */
export async function deleteContent(client: CmsClient, ref: ContentRef): Promise<DeletedContent> {
  const { value } = await unwrap(
    client.POST('/api/v1/contents/{siteId}/{channelId}/{id}/actions/delete', contentPath(ref)),
  );
  return value;
}
