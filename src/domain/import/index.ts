import { type Db, providerOfClient } from '../../db/client.ts';
import { hashPlainPassword, type StoredPassword } from '../accounts/passwords.ts';
import { invalid } from '../errors.ts';
import { type ParsedDocument, parseDocument, TABLES, type Table } from './document.ts';
import { chunks, ImportProblems } from './fields.ts';
import { planAdministrators, planApiKeys, planContents, planUsers } from './planRecords.ts';
import { planStructure } from './planStructure.ts';
import { loadState } from './state.ts';
import { insertRows, MODEL_TABLES, moveIdSequences } from './write.ts';

/*
 * Loads a whole document of sites, channels, contents, users, administrators and API keys in one
 * transaction: either every record is written or, when anything is wrong, nothing is and the error
 * lists every problem of the file, each naming its record.
 */

export type ImportSummary = Record<Table, number> & {
  /** Root channels created for sites whose file did not list them (included in `channels`). */
  rootChannelsCreated: number;
};

/** Long enough for tens of thousands of rows on a slow disk; the default (5 s) is not. */
const TRANSACTION_TIMEOUT_MS = 10 * 60 * 1000;
/** scrypt runs on libuv's thread pool (4 threads by default): more at once only queue. */
const HASH_CONCURRENCY = 4;

async function hashPasswords(doc: ParsedDocument): Promise<Map<object, StoredPassword>> {
  const records = [...doc.users, ...doc.administrators].map((record) => record.value);
  const hashes = new Map<object, StoredPassword>();
  for (const slice of chunks(records, HASH_CONCURRENCY)) {
    const stored = await Promise.all(slice.map((record) => hashPlainPassword(record.password)));
    slice.forEach((record, i) => {
      hashes.set(record, stored[i] as StoredPassword);
    });
  }
  return hashes;
}

export async function importDocument(db: Db, document: unknown): Promise<ImportSummary> {
  const problems = new ImportProblems(TABLES);
  const doc = parseDocument(document, problems);
  // Hashed before the transaction opens, so no lock is held during seconds of key derivation.
  const passwords = await hashPasswords(doc);
  const now = new Date();

  return db.$transaction(
    async (tx) => {
      const state = await loadState(tx, doc);
      const structure = planStructure(doc, state, problems, now);
      const contents = planContents(doc, state, structure, problems, now);
      const users = planUsers(doc, state, problems, passwords, now);
      const administrators = planAdministrators(doc, state, structure, problems, passwords, now);
      const apiKeys = planApiKeys(doc, state, problems, now);
      if (problems.count > 0) {
        const noun = problems.count === 1 ? 'problem' : 'problems';
        throw invalid(
          `The import file has ${problems.count} ${noun}; nothing was imported`,
          problems.list.map(({ path, message }) => ({ field: path, message })),
        );
      }

      await insertRows(tx, MODEL_TABLES.sites, structure.sites);
      await insertRows(tx, MODEL_TABLES.channels, structure.channels);
      for (const { id, ...fields } of structure.channelUpdates) {
        await tx.channel.update({ where: { id }, data: fields });
      }
      await insertRows(tx, MODEL_TABLES.contents, contents);
      await insertRows(tx, MODEL_TABLES.users, users);
      await insertRows(tx, MODEL_TABLES.administrators, administrators);
      await insertRows(tx, MODEL_TABLES.apiKeys, apiKeys);

      const summary: ImportSummary = {
        sites: structure.sites.length,
        channels: structure.channels.length,
        contents: contents.length,
        users: users.length,
        administrators: administrators.length,
        apiKeys: apiKeys.length,
        rootChannelsCreated: structure.rootChannelsCreated,
      };
      if (providerOfClient(db) === 'postgresql') {
        const written = TABLES.filter((table) => summary[table] > 0);
        await moveIdSequences(
          tx,
          written.map((table) => MODEL_TABLES[table]),
        );
      }
      return summary;
    },
    { timeout: TRANSACTION_TIMEOUT_MS, maxWait: 30_000 },
  );
}
