import { readFile } from 'node:fs/promises';
import type { Db } from '../db/client.ts';
import { issueApiKey } from '../domain/apiKeys/issueApiKey.ts';
import { formatDateTime } from '../domain/dates.ts';
import { TABLES } from '../domain/import/document.ts';
import { importDocument } from '../domain/import/index.ts';
import { DEMO_API_KEY_TITLE, describeDemoSecrets, seedDemoWhenEmpty } from '../domain/seed/demo.ts';
import { CommandFailure, parseExpiry, parseOptions, parseScopes, UsageError } from './options.ts';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

export interface CliContext extends CliIo {
  db: Db;
  /** The database the client is connected to (cross-process locks are keyed by it). */
  databaseUrl: string;
}

/** What a command does once its command line checked out; resolves to the exit code. */
export type Action = (context: CliContext) => Promise<number>;

export interface Command {
  name: string;
  usage: string;
  summary: string;
  /** Checks the command line (and reads its input) before the database is touched. */
  prepare(args: string[]): Promise<Action>;
}

const importCommand: Command = {
  name: 'import',
  usage: 'cms import FILE',
  summary:
    'Load sites, channels, contents, users, administrators and API keys from a JSON file, all or nothing.',
  async prepare(args) {
    const { positionals } = parseOptions(args, {}, 1);
    const file = positionals[0];
    if (!file) throw new UsageError('name the JSON file to import');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new CommandFailure(`cannot read ${file}: ${(error as Error).message}`);
    }
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (error) {
      throw new CommandFailure(`${file} is not valid JSON: ${(error as Error).message}`);
    }
    return async ({ db, out }) => {
      const summary = await importDocument(db, document);
      out(`Imported ${file}:`);
      for (const table of TABLES) {
        const note =
          table === 'channels' && summary.rootChannelsCreated > 0
            ? ` (${summary.rootChannelsCreated} root channel${summary.rootChannelsCreated > 1 ? 's' : ''} created)`
            : '';
        out(`  ${table.padEnd(15)}${String(summary[table]).padStart(7)}${note}`);
      }
      return 0;
    };
  },
};

const apiKeyCommand: Command = {
  name: 'apikey',
  usage: 'cms apikey create --title TITLE --scopes all|Contents,Channels,... [--expires yyyy-MM-dd]',
  summary: 'Issue an API key; it is printed once and only its digest is stored.',
  async prepare(args) {
    const { values, positionals } = parseOptions(
      args,
      { title: { type: 'string' }, scopes: { type: 'string' }, expires: { type: 'string' } },
      1,
    );
    if (positionals[0] !== 'create') {
      throw new UsageError(
        positionals[0] ? `unknown subcommand '${positionals[0]}'` : 'missing subcommand: create',
      );
    }
    const title = values.title?.trim();
    if (!title) throw new UsageError('--title is required');
    if (values.scopes === undefined) throw new UsageError('--scopes is required');
    const scopes = parseScopes(values.scopes);
    const expiresAt = values.expires === undefined ? undefined : parseExpiry(values.expires);
    return async ({ db, out, err }) => {
      const { id, key } = await issueApiKey(db, { title, scopes, expiresAt });
      // The key alone on stdout, so a script can capture it; the explanation goes to stderr.
      out(key);
      const expiry = expiresAt ? `, expires ${formatDateTime(expiresAt)}` : ', never expires';
      err(`API key ${id} "${title}" created with scopes ${scopes.join(', ')}${expiry}.`);
      err('Store the key now: it cannot be shown again (only its digest is kept).');
      return 0;
    };
  },
};

const seedDemoCommand: Command = {
  name: 'seed-demo',
  usage: 'cms seed-demo',
  summary:
    'Fill an empty database with a demo site, channels, contents, two accounts with random passwords and an all-scopes key, in one transaction.',
  async prepare(args) {
    parseOptions(args, {});
    return async ({ db, databaseUrl, out, err }) => {
      const secrets = await seedDemoWhenEmpty(db, databaseUrl);
      if (secrets === undefined) {
        const sites = await db.site.count();
        err(
          `cms seed-demo: the database already has ${sites} site${sites === 1 ? '' : 's'}; it only seeds an empty one.`,
        );
        return 1;
      }
      const counts = await Promise.all([db.channel.count(), db.content.count()]);
      out(`Demo site created: 1 site, ${counts[0]} channels, ${counts[1]} contents.`);
      out('Sign-in (random passwords):');
      for (const line of describeDemoSecrets(secrets)) out(line);
      out(`API key "${DEMO_API_KEY_TITLE}" (all scopes): ${secrets.apiKey}`);
      out('Store the passwords and the key now: they cannot be shown again.');
      return 0;
    };
  },
};

export const COMMANDS: readonly Command[] = [importCommand, apiKeyCommand, seedDemoCommand];
