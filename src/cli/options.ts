import { parseArgs } from 'node:util';
import { formatDateTime, parseDateTime } from '../domain/dates.ts';
import { SCOPES, type Scope } from '../domain/principal.ts';

/** A mistake in the command line: the command prints it with the usage and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command that cannot do its work (unreadable input, refused data): printed, exit 1. */
export class CommandFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailure';
  }
}

type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;

/** Edit distance between two option names (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** "unknown option '--titel'; did you mean --title? Options: --title, --scopes, --expires". */
function unknownOptionMessage(given: string, options: OptionSpec): string {
  const known = Object.keys(options).map((name) => `--${name}`);
  const name = given.replace(/=.*$/, '');
  const close = known.filter((option) => distance(option, name) <= 2);
  const hint = close.length > 0 ? `; did you mean ${close.join(' or ')}?` : '.';
  const list = known.length > 0 ? ` Options: ${known.join(', ')}.` : ' This command takes no options.';
  return `unknown option '${name}'${hint}${list}`;
}

/**
 * `npm run cms apikey create --title t` without the `--`: npm takes the options as its own settings
 * (left in the environment as npm_config_<name>) and passes only their values on.
 */
function keptByNpm(options: OptionSpec, env: NodeJS.ProcessEnv): string | undefined {
  if (env.npm_lifecycle_event !== 'cms') return undefined;
  const taken = Object.keys(options).filter(
    (name) => env[`npm_config_${name.replaceAll('-', '_')}`] !== undefined,
  );
  if (taken.length === 0) return undefined;
  const names = taken.map((name) => `--${name}`).join(', ');
  return `npm kept ${names} for itself: put -- after npm run cms, e.g. npm run cms -- apikey create --title "my client" --scopes all`;
}

/** node:util parseArgs, strict, with its errors turned into usage errors. */
export function parseOptions<O extends OptionSpec>(
  args: string[],
  options: O,
  positionals = 0,
  env: NodeJS.ProcessEnv = process.env,
) {
  const npmProblem = keptByNpm(options, env);
  if (npmProblem !== undefined) throw new UsageError(npmProblem);
  args.forEach((arg, index) => {
    const previous = (args[index - 1] ?? '').replace(/^--/, '');
    const isValue = index > 0 && !args[index - 1]?.includes('=') && options[previous]?.type === 'string';
    const name = arg.replace(/^--?/, '').replace(/=.*$/, '');
    if (arg.startsWith('-') && arg !== '--' && !isValue && !Object.hasOwn(options, name))
      throw new UsageError(unknownOptionMessage(arg, options));
  });
  try {
    const parsed = parseArgs({ args, options, strict: true, allowPositionals: positionals > 0 });
    if (parsed.positionals.length > positionals) {
      throw new UsageError(`unexpected argument '${parsed.positionals[positionals]}'`);
    }
    return parsed;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** `all`, or scope names separated by commas (any letter case). */
export function parseScopes(text: string): Scope[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const valid = `valid scopes: ${SCOPES.join(', ')} (or 'all' for every scope)`;
  if (names.length === 0) throw new UsageError(`--scopes names no scope; ${valid}`);
  if (names.length === 1 && names[0]?.toLowerCase() === 'all') return [...SCOPES];
  const unknown = names.filter((name) => !SCOPES.some((scope) => scope.toLowerCase() === name.toLowerCase()));
  if (unknown.length > 0) {
    const list = unknown.map((name) => `'${name}'`).join(', ');
    throw new UsageError(`unknown scope${unknown.length > 1 ? 's' : ''} ${list}; ${valid}`);
  }
  return SCOPES.filter((scope) => names.some((name) => name.toLowerCase() === scope.toLowerCase()));
}

/**
 * `yyyy-MM-dd` (the key works through that whole day, so it expires at the next midnight) or a full
 * `yyyy-MM-dd HH:mm:ss`. Must lie in the future.
 */
export function parseExpiry(text: string, now = new Date()): Date {
  const date = parseDateTime(text);
  if (!date) throw new UsageError(`--expires must be a date yyyy-MM-dd (got '${text}')`);
  const expiresAt = /^\d{4}-\d{2}-\d{2}$/.test(text.trim())
    ? new Date(date.getFullYear(), date.getMonth(), date.getDate() + 1)
    : date;
  if (expiresAt <= now)
    throw new UsageError(`--expires must lie in the future (got ${formatDateTime(date)})`);
  return expiresAt;
}

/**
 * The expiry as the operator meant it, in the service's time zone (TZ, else the machine's): a date
 * alone is "the end of" that day, not the next midnight it is stored as.
 */
export function describeExpiry(text: string, expiresAt: Date): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const day = text.trim();
  return /^\d{4}-\d{2}-\d{2}$/.test(day)
    ? `expires at the end of ${day} (${zone})`
    : `expires ${formatDateTime(expiresAt)} (${zone})`;
}
