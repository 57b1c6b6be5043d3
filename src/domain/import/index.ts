import type { DbHandle } from '../../db/client.ts';
import { hashPlainPassword, type StoredPassword } from '../accounts/passwords.ts';
import { invalid } from '../errors.ts';
import { beginBulkLoad, settleBulkLoad } from './bulkLoad.ts';
import {
  type Parsed,
  type ParsedDocument,
  parseContent,
  scanDocument,
  TABLES,
  type Table,
} from './document.ts';
import { chunks, ImportProblems } from './fields.ts';
import { ContentPlanner, decodeAvatars, planAdministrators, planApiKeys, planUsers } from './planRecords.ts';
import { planStructure } from './planStructure.ts';
import type { ContentRecord } from './records.ts';
import { documentSource, type ImportSource } from './source.ts';
import { existingContents, loadState, type Tx } from './state.ts';
import { insertRows, MODEL_TABLES, moveIdSequences } from './write.ts';

/*
 * Loads a whole document of sites, channels, contents, users, administrators and API keys in one
 * transaction: either every record is written or, when anything is wrong, nothing is and the error
 * lists every problem of the file, each naming its record.
 *
 * The document is read twice and never held whole: a first pass checks every record's shape and
 * notes the ids and guids the contents claim; the transaction then checks sites, channels and
 * accounts, and a second pass reads the contents again, checking and inserting them in batches.
 */

export type ImportSummary = Record<Table, number> & {
  /** Root channels created for sites whose file did not list them (included in `channels`). */
  rootChannelsCreated: number;
};

/** Where a running import is: reading checks the file (done/total in the source's units), writing counts contents. */
export interface ImportProgress {
  phase: 'reading' | 'writing';
  done: number;
  total: number | undefined;
}

export interface ImportOptions {
  /** Called often (every record while reading, every batch while writing): keep it cheap. */
  onProgress?: (progress: ImportProgress) => void;
}

/** Long enough for a million rows on a slow disk; the default (5 s) is not. */
const TRANSACTION_TIMEOUT_MS = 2 * 60 * 60 * 1000;
/** scrypt runs on libuv's thread pool (4 threads by default): more at once only queue. */
const HASH_CONCURRENCY = 4;
/** Contents checked and inserted together in the write pass: what memory holds of them at once. */
const CONTENT_BATCH = 1000;

async function hashPasswords(doc: ParsedDocument): Promise<Map<object, StoredPassword>> {
  const records = [...doc.users, ...doc.administrators].map((record) => record.value);
  const hashes = new Map<object, StoredPassword>();
  for (const slice of chunks(records, HASH_CONCURRENCY)) {
    const stored = await Promise.all(
      slice.map((record) => (record.password === null ? undefined : hashPlainPassword(record.password))),
    );
    slice.forEach((record, i) => {
      const hash = stored[i];
      if (hash) hashes.set(record, hash);
    });
  }
  return hashes;
}

/** Imports a document held in memory (tests, the demo seed). */
export function importDocument(
  database: Pick<DbHandle, 'db' | 'provider'>,
  document: unknown,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  return importFrom(database, documentSource(document), options);
}

function failure(problems: ImportProblems): Error {
  const noun = problems.count === 1 ? 'problem' : 'problems';
  return invalid(
    `The import file has ${problems.count} ${noun}; nothing was imported`,
    problems.list.map(({ path, message }) => ({ field: path, message })),
  );
}

/**
 * The write pass over the contents: each batch is checked against the database and, while the
 * import has no problem at all, inserted. Returns the number of contents inserted.
 */
async function writeContents(
  tx: Tx,
  source: ImportSource,
  planner: ContentPlanner,
  problems: ImportProblems,
  expected: number,
  onProgress: (done: number) => void,
  sites: Set<number>,
): Promise<number> {
  // Shape problems were reported by the first pass; reported again here they would be doubled.
  const reported = new ImportProblems(TABLES);
  let batch: Parsed<ContentRecord>[] = [];
  let seen = 0;
  let written = 0;
  let inSection = false;
  let sectionRead = false;
  const flush = async () => {
    const stored = await existingContents(
      tx,
      batch.flatMap(({ value }) => (value.id === undefined ? [] : [value.id])),
      batch.flatMap(({ value }) => (value.guid === undefined ? [] : [value.guid])),
    );
    const rows = planner.plan(batch, stored);
    batch = [];
    if (problems.count === 0) {
      await insertRows(tx, MODEL_TABLES.contents, rows);
      written += rows.length;
      for (const row of rows) sites.add(row.siteId);
    }
    onProgress(seen);
  };
  for await (const entry of source.entries()) {
    if (entry.kind === 'section') {
      // Only the first contents section is read, as in the first pass (a second one is a problem).
      inSection = entry.key === 'contents' && entry.array && !sectionRead;
      if (entry.key === 'contents') sectionRead = true;
      continue;
    }
    if (entry.kind !== 'record' || !inSection) continue;
    seen++;
    const ref = { table: 'contents', index: entry.index };
    const value = parseContent(entry.value, ref, reported);
    if (value === undefined) continue;
    batch.push({ ref: { ...ref, id: value.id }, value });
    if (batch.length >= CONTENT_BATCH) await flush();
  }
  if (batch.length > 0) await flush();
  if (seen !== expected) {
    throw invalid('The import file changed while it was being imported; nothing was imported', []);
  }
  return written;
}

export async function importFrom(
  { db, provider }: Pick<DbHandle, 'db' | 'provider'>,
  source: ImportSource,
  { onProgress = () => {} }: ImportOptions = {},
): Promise<ImportSummary> {
  const problems = new ImportProblems(TABLES);
  const doc = await scanDocument(source, problems, () =>
    onProgress({ phase: 'reading', ...source.progress() }),
  );
  // Hashed before the transaction opens, so no lock is held during seconds of key derivation.
  const passwords = await hashPasswords(doc);
  const avatarImages = decodeAvatars(doc, problems);
  const now = new Date();
  const totalContents = doc.contents.count;

  return db.$transaction(
    async (tx) => {
      const state = await loadState(tx, doc);
      const structure = planStructure(doc, state, problems, now);
      const { users, avatars } = planUsers(doc, state, problems, passwords, now, avatarImages);
      const administrators = planAdministrators(doc, state, structure, problems, passwords, now);
      const apiKeys = planApiKeys(doc, state, problems, now);

      // The sites whose channels or contents are inserted: their labels, tallies and generations
      // are settled once at the end (bulkLoad.ts).
      const written = new Set(structure.channels.map((channel) => channel.siteId));
      await beginBulkLoad(tx, provider);
      // Channels first: contents are inserted as they are read, below them.
      if (problems.count === 0) {
        await insertRows(tx, MODEL_TABLES.sites, structure.sites);
        await insertRows(tx, MODEL_TABLES.channels, structure.channels);
        for (const { id, ...fields } of structure.channelUpdates) {
          await tx.channel.update({ where: { id }, data: { ...fields, version: { increment: 1 } } });
        }
      }
      const planner = new ContentPlanner(doc.contents, structure, problems, state.maxIds.contents, now);
      onProgress({ phase: 'writing', done: 0, total: totalContents });
      const contents =
        totalContents === 0
          ? 0
          : await writeContents(
              tx,
              source,
              planner,
              problems,
              totalContents,
              (done) => onProgress({ phase: 'writing', done, total: totalContents }),
              written,
            );
      // Nothing is kept of a failed import: throwing rolls back whatever was inserted.
      if (problems.count > 0) throw failure(problems);
      await settleBulkLoad(tx, provider, written);

      await insertRows(tx, MODEL_TABLES.users, users);
      // One at a time: an avatar is up to megabytes, past a multi-row statement's text bound.
      for (const avatar of avatars) await tx.userAvatar.create({ data: avatar });
      await insertRows(tx, MODEL_TABLES.administrators, administrators);
      await insertRows(tx, MODEL_TABLES.apiKeys, apiKeys);

      const summary: ImportSummary = {
        sites: structure.sites.length,
        channels: structure.channels.length,
        contents,
        users: users.length,
        administrators: administrators.length,
        apiKeys: apiKeys.length,
        rootChannelsCreated: structure.rootChannelsCreated,
      };
      if (provider === 'postgresql') {
        const tables = TABLES.filter((table) => summary[table] > 0);
        await moveIdSequences(
          tx,
          tables.map((table) => MODEL_TABLES[table]),
        );
      }
      return summary;
    },
    { timeout: TRANSACTION_TIMEOUT_MS, maxWait: 30_000 },
  );
}
