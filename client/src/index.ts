/*
 * The typed client of the CMS service: openapi-fetch over the `paths` generated from
 * openapi/cms.yaml, so a path, parameter, request body or response field that is not in the
 * contract fails to compile. The service's own tests use it, so the client is exercised on every run.
 * (It becomes a published package later; for now it imports the generated types from the service.)
 */
import createClient, {
  type Client,
  type FetchResponse,
  type MaybeOptionalInit,
  type Middleware,
  type ParseAs,
} from 'openapi-fetch';
import type { components, operations, paths } from '../../src/generated/openapi.ts';

export type { components, operations, paths };

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
