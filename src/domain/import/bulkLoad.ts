import type { DbHandle } from '../../db/client.ts';
import type { Tx } from './state.ts';

/*
 * On PostgreSQL an import's transaction takes over what the insert triggers do per statement — the
 * contents' labels and tallies, the sites' generations — and does it once, set-based, before it
 * commits (migration 20261127051500_bulk_import_settles_once explains why: thousands of statements
 * in one transaction made every statement walk longer chains of the same rows' versions). The
 * setting is the transaction's own (`set_config(…, true)`): no other writer is affected, and a
 * rolled-back import leaves nothing. SQLite's triggers are per row and stay as they are.
 */

type Provider = DbHandle['provider'];

/** From here on in tx, the insert triggers leave labels, tallies and generations to settleBulkLoad. */
export async function beginBulkLoad(tx: Tx, provider: Provider): Promise<void> {
  if (provider !== 'postgresql') return;
  await tx.$executeRaw`SELECT set_config('cms.bulk_import', 'on', true)`;
}

/** The triggers maintain again; the labels, tallies and generations of the sites written are settled. */
export async function settleBulkLoad(tx: Tx, provider: Provider, sites: ReadonlySet<number>): Promise<void> {
  if (provider !== 'postgresql') return;
  await tx.$executeRaw`SELECT set_config('cms.bulk_import', 'off', true)`;
  if (sites.size === 0) return;
  const ordered = [...sites].sort((a, b) => a - b);
  await tx.$executeRaw`SELECT "content_bulk_import_settle"(${ordered}::int[])`;
}
