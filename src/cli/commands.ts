import { once } from 'node:events';
import { constants, createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { access, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Config } from '../config.ts';
import type { DbHandle } from '../db/client.ts';
import { hashPlainPassword } from '../domain/accounts/passwords.ts';
import { passwordProblem } from '../domain/accounts/rules.ts';
import { issueApiKey } from '../domain/apiKeys/issueApiKey.ts';
import { SYSTEM_ACTOR } from '../domain/events/actor.ts';
import { type ExportSink, type ExportSummary, exportDocument } from '../domain/export/index.ts';
import { TABLES } from '../domain/import/document.ts';
import { type ImportSummary, importFrom } from '../domain/import/index.ts';
import { ImportSyntaxError, streamSource } from '../domain/import/source.ts';
import { resetPasswordByName } from '../domain/logins/accounts.ts';
import { DEMO_API_KEY_TITLE, describeDemoSecrets, seedDemoWhenEmpty } from '../domain/seed/demo.ts';
import { advanceCredentialsGeneration } from '../state/credentialsGeneration.ts';
import {
  CommandFailure,
  describeExpiry,
  parseExpiry,
  parseOptions,
  parseScopes,
  UsageError,
} from './options.ts';
import { createProgress, followPhases } from './progress.ts';
import { sandboxRoleCommand } from './sandboxRole.ts';

/** Files up to this size are read whole once more to say where their JSON breaks. */
const LOCATE_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * "line 3, column 7" where the JSON of a file breaks: the streaming parser does not count lines, so
 * a file small enough is parsed once more whole; a larger one is reported without the place.
 */
async function jsonErrorLocation(file: string, size: number): Promise<string | undefined> {
  if (size > LOCATE_LIMIT_BYTES) return undefined;
  const text = await readFile(file, 'utf8');
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    const position = /at position (\d+)/.exec((error as Error).message)?.[1];
    if (position === undefined) return undefined;
    const before = text.slice(0, Number(position));
    const line = before.split('\n').length;
    return `line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
  }
}

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Reads the first line of stdin (a secret: never taken from the command line, which others can see). */
  readLine?: (() => Promise<string>) | undefined;
  /** stderr when it is a terminal: long commands draw a progress bar on it. */
  tty?: NodeJS.WriteStream | undefined;
}

export interface CliContext extends CliIo, Pick<DbHandle, 'db' | 'provider'> {
  /** The settings, the database the client is connected to (`config.databaseUrl`) among them. */
  config: Config;
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

/** What a command that touches no schema of the service does: no migrations, no client. */
export type StandaloneAction = (context: Omit<CliContext, 'db' | 'provider'>) => Promise<number>;

/**
 * A command run with rights the service must not have (a privileged database role): the tool
 * applies no migrations for it, so that role never comes to own the service's tables.
 */
export interface StandaloneCommand {
  name: string;
  usage: string;
  summary: string;
  standalone: true;
  prepare(args: string[]): Promise<StandaloneAction>;
}

async function openOutput(path: string): Promise<WriteStream> {
  const output = createWriteStream(path, { flags: 'wx' });
  await once(output, 'open');
  return output;
}

/** Writes with backpressure: waits for 'drain' when the stream's buffer is full. */
function sinkOf(output: WriteStream): ExportSink {
  return {
    async write(text) {
      if (!output.write(text)) await once(output, 'drain');
    },
  };
}

async function closeOutput(output: WriteStream): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    output.once('error', reject);
    output.end(() => resolve());
  });
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
    let size: number;
    try {
      const info = await stat(file);
      if (!info.isFile()) throw new Error('not a file');
      await access(file, constants.R_OK);
      size = info.size;
    } catch (error) {
      throw new CommandFailure(`cannot read ${file}: ${(error as Error).message}`);
    }
    return async ({ db, provider, out, err, tty }) => {
      const source = streamSource(() => createReadStream(file, { highWaterMark: 1024 * 1024 }), size);
      const progress = followPhases(createProgress({ tty, line: err }), {
        reading: { label: 'Checking', unit: 'bytes' },
        writing: { label: 'Writing', unit: 'contents' },
      });
      let summary: ImportSummary;
      let completed = false;
      try {
        summary = await importFrom({ db, provider }, source, { onProgress: progress.onProgress });
        // PostgreSQL plans from statistics that a bulk load leaves stale until autovacuum gets to
        // the tables (never, where it is off): without them the template tag's Hits order reads
        // every approved row of its scope instead of walking its index. The load also leaves a dead
        // version of a ContentTally row per content written (the triggers' counts), which every
        // total then reads past: 67,766 dead for 400 live after 100k (bench/LIST-PLAN.md).
        if (provider === 'postgresql' && summary.contents > 0) await db.$executeRawUnsafe('VACUUM (ANALYZE)');
        completed = true;
      } catch (error) {
        if (error instanceof ImportSyntaxError) {
          const where = await jsonErrorLocation(file, size);
          throw new CommandFailure(
            `${file} is not valid JSON${where === undefined ? '' : ` at ${where}`}: ${error.message}; nothing was imported`,
          );
        }
        throw error;
      } finally {
        progress.finish(completed);
      }
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

const exportCommand: Command = {
  name: 'export',
  usage: 'cms export FILE',
  summary:
    'Write every site, channel, content, user, administrator and API key to a JSON file in the import format, without passwords or key secrets.',
  async prepare(args) {
    const { positionals } = parseOptions(args, {}, 1);
    const file = positionals[0];
    if (!file) throw new UsageError('name the JSON file to write');
    return async ({ db, provider, out, err, tty }) => {
      // Written beside the target and renamed at the end: a failed export leaves no half file.
      const partial = join(dirname(file), `.${basename(file)}.${process.pid}.partial`);
      let output: WriteStream;
      try {
        output = await openOutput(partial);
      } catch (error) {
        throw new CommandFailure(`cannot write ${file}: ${(error as Error).message}`);
      }
      const progress = followPhases(createProgress({ tty, line: err }), {
        exporting: { label: 'Exporting', unit: 'records' },
      });
      let summary: ExportSummary;
      let completed = false;
      try {
        summary = await exportDocument({ db, provider }, sinkOf(output), {
          onProgress: (event) => progress.onProgress({ phase: 'exporting', ...event }),
        });
        await closeOutput(output);
        await rename(partial, file);
        completed = true;
      } catch (error) {
        output.destroy();
        await rm(partial, { force: true });
        throw error;
      } finally {
        progress.finish(completed);
      }
      out(`Exported to ${file}:`);
      for (const table of TABLES) out(`  ${table.padEnd(15)}${String(summary[table]).padStart(7)}`);
      err('Accounts are exported without passwords and API keys without secrets: see "cms help".');
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
      const { id, key } = await issueApiKey(db, { title, scopes, expiresAt }, SYSTEM_ACTOR);
      // The key alone on stdout, so a script can capture it; the explanation goes to stderr.
      out(key);
      const expiry =
        expiresAt && values.expires !== undefined
          ? `, ${describeExpiry(values.expires, expiresAt)}`
          : ', never expires';
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
    return async ({ db, provider, config, out, err }) => {
      const secrets = await seedDemoWhenEmpty({ db, provider }, config.databaseUrl);
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

const ACCOUNT_KINDS = ['user', 'administrator'] as const;

/**
 * Runs a change that ends credentials (a password reset ends every token of the account) and then
 * tells every node, as the API operations do: with Redis, the service's workers keep credentials
 * that authenticated lately until the credentials generation advances (src/http/credentialCache.ts).
 * Redis must answer before anything changes, so the change is never made without the advance.
 */
export async function endingCredentials(config: Config, change: () => Promise<void>): Promise<void> {
  if (config.redisUrl === undefined) return change();
  // Loaded only when Redis is configured, as the service does.
  const { connectRedis } = await import('../db/redis.ts');
  const { RedisSharedState } = await import('../state/redis.ts');
  const redis = await connectRedis(config.redisUrl).catch(() => {
    throw new CommandFailure('REDIS_URL is set but Redis does not answer there; nothing was changed');
  });
  try {
    // The store itself, without the service's fail policy: a failure must be seen, not skipped.
    const state = new RedisSharedState(redis, config.redisKeyPrefix);
    await change();
    await advanceCredentialsGeneration(state).catch(() => {
      throw new CommandFailure(
        `the change is made, but Redis stopped answering before the service's nodes were told: tokens may keep working there for up to CREDENTIAL_CACHE_SECONDS (${config.credentialCacheSeconds} s)`,
      );
    });
  } finally {
    redis.disconnect();
  }
}

const passwordCommand: Command = {
  name: 'password',
  usage: 'cms password user|administrator USERNAME   (the new password on stdin)',
  summary:
    'Give an account a new password, read from the first line of stdin: for accounts imported from an export, which carry none. Ends its lockout and every token issued before.',
  async prepare(args) {
    const { positionals } = parseOptions(args, {}, 2);
    const [kind, userName] = positionals;
    if (kind !== 'user' && kind !== 'administrator') {
      throw new UsageError(`name the kind of account: ${ACCOUNT_KINDS.join(' or ')}`);
    }
    if (!userName) throw new UsageError('name the account (its user name)');
    return async ({ db, config, readLine, out }) => {
      if (!readLine) throw new CommandFailure('no stdin to read the password from');
      const plain = (await readLine()).replace(/\r$/, '');
      if (plain === '')
        throw new CommandFailure(
          'nothing was read from standard input; give the new password on its first line, e.g. ' +
            `printf '%s\\n' "$NEW_PASSWORD" | npm run cms -- password ${kind} ${userName}`,
        );
      const problem = passwordProblem(plain, config.accounts.passwordRule);
      if (problem) throw new CommandFailure(`the password ${problem}; nothing was changed`);
      const stored = await hashPlainPassword(plain);
      // A new password ends a lockout and every token issued before, as a password change does.
      await endingCredentials(config, async () => {
        if (!(await resetPasswordByName(db, kind, userName, stored, SYSTEM_ACTOR)))
          throw new CommandFailure(`no ${kind} named '${userName}'; nothing was changed`);
      });
      out(`New password set for ${kind} '${userName}'.`);
      return 0;
    };
  },
};

export const COMMANDS: readonly (Command | StandaloneCommand)[] = [
  importCommand,
  exportCommand,
  apiKeyCommand,
  passwordCommand,
  seedDemoCommand,
  sandboxRoleCommand,
];
