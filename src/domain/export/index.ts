import type { DbHandle } from '../../db/client.ts';
import { TABLES, type Table } from '../import/document.ts';
import type { Tx } from '../import/state.ts';
import {
  administratorRecord,
  apiKeyRecord,
  channelRecord,
  contentRecord,
  siteRecord,
  userRecord,
} from './records.ts';

/*
 * Writes the whole database in the import format, one table after another, read in pages of rows
 * by id: memory holds one page, whatever the size of the database. Everything is read in one
 * read transaction, so the file is one consistent moment even while the service keeps writing
 * (a snapshot: PostgreSQL's REPEATABLE READ, SQLite's read transaction under WAL).
 */

export type ExportSummary = Record<Table, number>;

export interface ExportProgress {
  done: number;
  total: number;
}

export interface ExportOptions {
  /** Called after every page. */
  onProgress?: (progress: ExportProgress) => void;
}

/** Where the text goes; `write` resolves when the sink can take more (backpressure). */
export interface ExportSink {
  write(text: string): Promise<void>;
}

/** Records read at a time: what memory holds of them (a quarter of 1,000 cut an export's peak, bench/MEMORY.md). */
const PAGE = 250;
/** Long enough for millions of rows; a read transaction blocks no writer. */
const TRANSACTION_TIMEOUT_MS = 2 * 60 * 60 * 1000;

type Page = (tx: Tx, after: number) => Promise<{ id: number; record: unknown }[]>;

const byId = (after: number) => ({
  where: { id: { gt: after } },
  orderBy: { id: 'asc' as const },
  take: PAGE,
});

const PAGES: Record<Table, Page> = {
  sites: async (tx, after) =>
    (await tx.site.findMany(byId(after))).map((row) => ({ id: row.id, record: siteRecord(row) })),
  channels: async (tx, after) =>
    (await tx.channel.findMany(byId(after))).map((row) => ({ id: row.id, record: channelRecord(row) })),
  contents: async (tx, after) =>
    (await tx.content.findMany(byId(after))).map((row) => ({ id: row.id, record: contentRecord(row) })),
  users: usersPage,
  administrators: async (tx, after) =>
    (await tx.administrator.findMany(byId(after))).map((row) => ({
      id: row.id,
      record: administratorRecord(row),
    })),
  apiKeys: async (tx, after) =>
    (await tx.apiKey.findMany(byId(after))).map((row) => ({ id: row.id, record: apiKeyRecord(row) })),
};

/** Avatars' bytes one page of users holds at most: a page ends early, before the user past it. */
const AVATAR_BYTES_PER_PAGE = 16 * 1024 * 1024;

/** Users with their uploaded avatars, each read on its own so that a page's avatars stay bounded. */
async function usersPage(tx: Tx, after: number): Promise<{ id: number; record: unknown }[]> {
  const rows = await tx.user.findMany(byId(after));
  const withAvatar = await tx.userAvatar.findMany({
    where: { userId: { in: rows.map((row) => row.id) } },
    select: { userId: true },
  });
  const hasAvatar = new Set(withAvatar.map((avatar) => avatar.userId));
  const page: { id: number; record: unknown }[] = [];
  let bytes = 0;
  for (const row of rows) {
    let avatar: Uint8Array | undefined;
    if (hasAvatar.has(row.id)) {
      if (page.length > 0 && bytes >= AVATAR_BYTES_PER_PAGE) break;
      avatar = (await tx.userAvatar.findUnique({ where: { userId: row.id }, select: { bytes: true } }))
        ?.bytes;
      bytes += avatar?.length ?? 0;
    }
    page.push({ id: row.id, record: userRecord(row, avatar) });
  }
  return page;
}

async function counts(tx: Tx): Promise<ExportSummary> {
  // One after another: an interactive transaction runs on a single connection.
  return {
    sites: await tx.site.count(),
    channels: await tx.channel.count(),
    contents: await tx.content.count(),
    users: await tx.user.count(),
    administrators: await tx.administrator.count(),
    apiKeys: await tx.apiKey.count(),
  };
}

/** Writes `{ "sites": [...], "channels": [...], ... }`, one record per line. */
export async function exportDocument(
  { db, provider }: Pick<DbHandle, 'db' | 'provider'>,
  sink: ExportSink,
  { onProgress = () => {} }: ExportOptions = {},
): Promise<ExportSummary> {
  const postgres = provider === 'postgresql';
  return db.$transaction(
    async (tx) => {
      if (postgres) await tx.$executeRawUnsafe('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const expected = await counts(tx);
      const total = TABLES.reduce((sum, table) => sum + expected[table], 0);
      const summary = Object.fromEntries(TABLES.map((table) => [table, 0])) as ExportSummary;
      let done = 0;
      onProgress({ done, total });
      await sink.write('{\n');
      for (const [position, table] of TABLES.entries()) {
        await sink.write(`${JSON.stringify(table)}: [`);
        let after = 0;
        for (;;) {
          const page = await PAGES[table](tx, after);
          if (page.length === 0) break;
          const text = page
            .map(({ record }, i) => `${summary[table] + i === 0 ? '\n' : ',\n'}${JSON.stringify(record)}`)
            .join('');
          summary[table] += page.length;
          after = page[page.length - 1]?.id ?? after;
          await sink.write(text);
          done += page.length;
          onProgress({ done, total });
        }
        await sink.write(
          `${summary[table] === 0 ? '' : '\n'}]${position === TABLES.length - 1 ? '' : ','}\n`,
        );
      }
      await sink.write('}\n');
      return summary;
    },
    { timeout: TRANSACTION_TIMEOUT_MS, maxWait: 30_000 },
  );
}
