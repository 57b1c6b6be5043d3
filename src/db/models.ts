import type * as Postgres from '../generated/prisma/postgresql/browser.ts';
import type * as Sqlite from '../generated/prisma/sqlite/browser.ts';
import { Prisma } from '../generated/prisma/sqlite/browser.ts';

/*
 * The model as both providers share it: row types and field lists. `npm run gen` renders the one
 * model (prisma/schema.prisma) for each provider, and the renders must agree (checked below, at
 * compile time), so either render's browser entry — types and enums only: no client, no driver, no
 * query compiler — stands for both. Code that needs rows or field names imports them from here,
 * never from a provider's client, which would load that provider's client on the other one.
 */

export type {
  Administrator,
  ApiKey,
  Channel,
  Content,
  ContentCheck,
  Event,
  Prisma,
  Site,
  SystemSetting,
  User,
  WebhookAttempt,
  WebhookDelivery,
  WebhookSubscription,
} from '../generated/prisma/sqlite/browser.ts';

/** The scalar fields of a model, in the model's order (the order Prisma returns them in). */
export const MODEL_FIELDS = {
  Content: Object.values(Prisma.ContentScalarFieldEnum),
  ApiKey: Object.values(Prisma.ApiKeyScalarFieldEnum),
  Channel: Object.values(Prisma.ChannelScalarFieldEnum),
  Site: Object.values(Prisma.SiteScalarFieldEnum),
} as const;

/** true when A and B are the same type, as far as assignability tells. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** Every model's row (its scalar fields and their types), by model name. */
type Rows<TypeMap extends { model: Record<string, { payload: { scalars: unknown } }> }> = {
  [Model in keyof TypeMap['model']]: TypeMap['model'][Model]['payload']['scalars'];
};
// A model, field or field type the two renders disagree on makes this false, and the build fails.
const rendersAgree: Same<Rows<Sqlite.Prisma.TypeMap>, Rows<Postgres.Prisma.TypeMap>> = true;
void rendersAgree;
// The field lists are taken from the SQLite render's browser entry (enums only, no client and no
// driver): the same values as the PostgreSQL render's, or the build fails.
const fieldListsAgree: Same<
  [
    typeof Sqlite.Prisma.ContentScalarFieldEnum,
    typeof Sqlite.Prisma.ApiKeyScalarFieldEnum,
    typeof Sqlite.Prisma.ChannelScalarFieldEnum,
    typeof Sqlite.Prisma.SiteScalarFieldEnum,
  ],
  [
    typeof Postgres.Prisma.ContentScalarFieldEnum,
    typeof Postgres.Prisma.ApiKeyScalarFieldEnum,
    typeof Postgres.Prisma.ChannelScalarFieldEnum,
    typeof Postgres.Prisma.SiteScalarFieldEnum,
  ]
> = true;
void fieldListsAgree;

type Operations = {
  model: Record<string, { operations: Record<string, unknown> }>;
  other: { operations: Record<string, unknown> };
};
type ArgsOf<Operation> = Operation extends { args: infer Args } ? Args : never;
type ResultOf<Operation> = Operation extends { result: infer Result } ? Result : never;
/** The operations of `From` (as `model.operation`) that `To` lacks, refuses the arguments of, or answers differently. */
type Unserved<
  From extends Record<string, unknown>,
  To extends Record<string, unknown>,
  Prefix extends string,
> = {
  [Operation in keyof From & string]: Operation extends keyof To
    ? [ArgsOf<From[Operation]>] extends [ArgsOf<To[Operation]>]
      ? Same<ResultOf<From[Operation]>, ResultOf<To[Operation]>> extends true
        ? never
        : `${Prefix}.${Operation}`
      : `${Prefix}.${Operation}`
    : `${Prefix}.${Operation}`;
}[keyof From & string];
type UnservedCalls<From extends Operations, To extends Operations> =
  | {
      [Model in keyof From['model'] & string]: Model extends keyof To['model']
        ? Unserved<From['model'][Model]['operations'], To['model'][Model]['operations'], Model>
        : Model;
    }[keyof From['model'] & string]
  | Unserved<From['other']['operations'], To['other']['operations'], '$'>;
/**
 * true when every call the SQLite render's client types allow — each model's operations and the
 * raw queries — is one the PostgreSQL render's client takes, with the same result type: what lets
 * one client type stand for both (src/db/client.ts). PostgreSQL's render allows more (case-insensitive
 * filters, more isolation levels); the service uses none of it.
 */
export type PostgresServesSqliteCalls = [
  UnservedCalls<Sqlite.Prisma.TypeMap, Postgres.Prisma.TypeMap>,
] extends [never]
  ? true
  : UnservedCalls<Sqlite.Prisma.TypeMap, Postgres.Prisma.TypeMap>;
