import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db, DbProvider } from '../db/client.ts';
import type { Principal } from '../domain/principal.ts';
import type { operations } from '../generated/openapi.ts';

/*
 * Every handler is typed from the contract: its input is the validated request of its operation,
 * its output the operation's 200 body. A handler that drifts from openapi/cms.yaml fails to compile.
 */

export type OperationId = keyof operations;

type Section<O, Where extends 'path' | 'query'> = O extends { parameters: infer P }
  ? P extends { [K in Where]?: infer T }
    ? [T] extends [undefined | never]
      ? Record<string, never>
      : NonNullable<T>
    : Record<string, never>
  : Record<string, never>;

/** An optional request body may be absent altogether: the handler sees undefined then. */
type JsonBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : O extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B | undefined
    : undefined;

type OkBody<O> = O extends { responses: { 200: { content: infer C } } } ? C[keyof C] : never;

export interface OperationInput<K extends OperationId> {
  path: Section<operations[K], 'path'>;
  query: Section<operations[K], 'query'>;
  body: JsonBody<operations[K]>;
}

export type OperationOutput<K extends OperationId> = OkBody<operations[K]>;

export interface OperationContext {
  db: Db;
  provider: DbProvider;
  config: Config;
  principal: Principal;
  log: Logger;
}

export type Handler<K extends OperationId> = (
  input: OperationInput<K>,
  context: OperationContext,
) => Promise<OperationOutput<K>>;
