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
