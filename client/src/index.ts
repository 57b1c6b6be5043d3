/*
 * The typed client of the CMS service: openapi-fetch over the `paths` generated from
 * openapi/cms.yaml, so a path, parameter, request body or response field that is not in the
 * contract fails to compile. The service's own tests use it, so the client is exercised on every run.
 * (It becomes a published package later; for now it imports the generated types from the service.)
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from '../../src/generated/openapi.ts';

export type { components, operations, paths };

/** Every error body is RFC 9457 problem+json; `type` is a stable URI to branch on. */
export type Problem = components['schemas']['Problem'];
export type ProblemType = Problem['type'];
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

export type CmsClient = Client<paths>;

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
  return client;
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
