import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';
import {
  DATABASE_URL_RULE,
  type Db,
  DEFAULT_DATABASE_URL,
  DEFAULT_SQLITE_QUERY_TIMEOUT_MS,
  providerOfUrl,
} from './db/client.ts';
import { USER_GRANTABLE_SCOPES } from './domain/access.ts';
import { type AccountPolicy, DEFAULT_ACCOUNT_POLICY } from './domain/logins/policy.ts';
import type { Scope } from './domain/principal.ts';
import { DEFAULT_WORKERS, integerWithin, MAX_WORKERS } from './integerSetting.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `*`, or the exact origins (`https://app.example.com`) allowed to call the API from a browser. */
export type CorsOrigins = '*' | readonly string[];

export interface Config {
  port: number;
  databaseUrl: string;
  /**
   * Signs access tokens. From CMS_SECRET, or, when that is unset, the value persisted in the
   * database on first start (see ensureTokenSecret), so that every node signs with the same one.
   */
  cmsSecret: string | undefined;
  /** IANA zone the contract's dates are written in; undefined means the machine's zone. */
  tz: string | undefined;
  logLevel: LogLevel;
  nodeEnv: string;
  /** Largest `perPage` a list accepts before answering 400. */
  maxPerPage: number;
  /**
   * Requests a minute per address (every path but the operations the contract exempts: ping, the
   * health checks), for requests without known-good credentials; 0 turns that limit off. Keys and
   * tokens are unlimited unless a key has its own limit (src/http/rateLimit.ts).
   */
  rateLimitPerMinute: number;
  /**
   * Which proxies in front of the service to believe about the client's address (express's
   * `trust proxy`): false (the default) believes none, and X-Forwarded-For is ignored; a number
   * trusts that many hops; a list trusts those addresses, CIDR ranges or the names `loopback`,
   * `linklocal`, `uniquelocal`. Every per-address decision (rate limits, login limits) and the logs
   * use the address it gives (docs/operating/README.md, "Behind a proxy").
   */
  trustProxy: TrustProxy;
  /** Redis for state every node must share (rate-limit counters); undefined on a single node. */
  redisUrl: string | undefined;
  /** Prefix of every key this service writes in Redis, so that several deployments can share one. */
  redisKeyPrefix: string;
  /**
   * Load the demo site into an empty database at start. On by default only for the embedded
   * default SQLite file (a try-out); a configured database gets it only when asked (SEED_DEMO=true).
   */
  seedDemo: boolean;
  /**
   * Create the database when it does not exist (a PostgreSQL database, a SQLite file and its
   * folder). On by default only for the embedded default file; otherwise a mistyped DATABASE_URL
   * is refused at start instead of silently served from a new, empty database (CREATE_DATABASE=true).
   */
  createDatabase: boolean;
  /**
   * Worker processes `npm start` runs under its supervisor (src/supervisor.ts), which replaces a
   * crashed one and rolls them all on a restart. 0 means no supervisor: one process serves alone
   * (for orchestrators that run one process per container and restart it themselves).
   */
  workers: number;
  /**
   * How long a worker keeps a key or token that authenticated, in seconds, so that its next
   * requests skip the lookup (only with Redis; 0 turns it off). Changes still apply at once on every
   * node: see src/http/credentialCache.ts.
   */
  credentialCacheSeconds: number;
  /**
   * Bytes an uploaded avatar may have (the file part itself); counted while the upload streams in,
   * so a longer one is a 413 as soon as it passes the limit, and never held whole.
   */
  avatarMaxBytes: number;
  /** Rows stl/sqlContents answers at most; the cursor stops there. */
  stlSqlMaxRows: number;
  /** Bytes of values stl/sqlContents answers at most, counted as the rows are read (400 beyond). */
  stlSqlMaxBytes: number;
  /** Time a stl/sqlContents query may run, in milliseconds, before it is stopped (400). */
  stlSqlTimeoutMs: number;
  /**
   * Time a content query (list, stl/contents) may hold a SQLite worker's one thread, in
   * milliseconds, before it is stopped (503; src/db/sqliteTimeLimit.ts). Unused on PostgreSQL.
   */
  sqliteQueryTimeoutMs: number;
  /**
   * Lockout and throttles of failed logins, the rule for new passwords, what a user's token carries
   * and who may log in by openId (docs/security/credentials.md).
   */
  accounts: AccountPolicy;
  /** The event record and webhook delivery (docs/api/events.md). */
  events: EventSettings;
  /**
   * How long the result of a create sent with an Idempotency-Key is kept for its retries, in
   * seconds (src/http/idempotency.ts, docs/api/conditional-writes.md).
   */
  idempotencyKeySeconds: number;
  /** Prometheus metrics on a port of their own (src/http/metrics.ts); undefined: no metrics at all. */
  metrics: MetricsConfig | undefined;
  /**
   * Origins whose pages may call the API from a browser (`*`: any); undefined: no CORS header is
   * ever sent (src/http/cors.ts).
   */
  corsOrigin: CorsOrigins | undefined;
  /**
   * Answers of at least this many bytes are sent compressed (br or gzip) to a client that accepts
   * it; undefined: never (a proxy in front compresses). src/http/compression.ts.
   */
  compressMinBytes: number | undefined;
}

export interface MetricsConfig {
  /**
   * Port of the metrics listener, never the API's: the supervisor serves there the sum over its
   * workers (WORKERS ≥ 1), a process serving alone its own figures (WORKERS=0).
   */
  port: number;
  /** Interface it listens on; undefined: every interface, as the API port. */
  host: string | undefined;
  /** When set, a scrape must send `Authorization: Bearer <token>` (401 otherwise). */
  token: string | undefined;
}

export const MIN_METRICS_TOKEN_LENGTH = 16;

/** TRUST_PROXY, read: none, a hop count, or trusted addresses and ranges (see Config.trustProxy). */
export type TrustProxy = false | number | string[];

const TRUST_PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, a CIDR range of one, or one of express's named ranges. */
function isTrustedProxyEntry(entry: string): boolean {
  if (TRUST_PROXY_NAMES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return integerWithin(bits, 0, family === 4 ? 32 : 128) !== undefined;
}

const TRUST_PROXY_RULE =
  'TRUST_PROXY must be a hop count from 1 to 32, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal';

/** Raised with every problem at once, so that an operator fixes the environment in one go. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export const MIN_SECRET_LENGTH = 32;

/** An integer setting within [min, max]; absent, `fallback` (a number, or undefined: off). */
function integer<Fallback extends number | undefined>(
  name: string,
  min: number,
  max: number,
  fallback: Fallback,
) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): number | Fallback => {
      if (raw === undefined) return fallback;
      const value = integerWithin(raw, min, max);
      if (value !== undefined) return value;
      ctx.addIssue({
        code: 'custom',
        message: `${name} must be an integer from ${min} to ${max} (got '${raw}')`,
      });
      return z.NEVER;
    });
}

function isTimeZone(name: string): boolean {
  // Intl also accepts offsets such as "+01:00", which are not zone names and mean something else to TZ.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** What NODE_ENV may say; anything else (`prod`, `dev`) is a typo that would silently mean development. */
const NODE_ENVS = ['production', 'development', 'test'] as const;

/** An origin as browsers send it: scheme, host and port only (no path, not even `/`). */
function isOrigin(text: string): boolean {
  return /^https?:\/\/[A-Za-z0-9.-]+(?::\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/.test(text);
}

const schema = z.object({
  PORT: integer('PORT', 1, 65535, 3000),
  DATABASE_URL: z
    .string()
    .optional()
    .transform((raw) => raw ?? DEFAULT_DATABASE_URL)
    // The URL may carry a password, so the message never repeats it.
    .refine((url) => providerOfUrl(url) !== undefined, { message: DATABASE_URL_RULE }),
  CMS_SECRET: z
    .string()
    .min(MIN_SECRET_LENGTH, { message: `CMS_SECRET must be at least ${MIN_SECRET_LENGTH} characters long` })
    .optional(),
  TZ: z
    .string()
    .optional()
    .refine((tz) => tz === undefined || isTimeZone(tz), {
      error: (issue) =>
        `TZ must be an IANA time zone name such as Europe/Paris (got '${String(issue.input)}')`,
    }),
  LOG_LEVEL: z
    .enum(LOG_LEVELS, {
      error: (issue) => `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got '${String(issue.input)}')`,
    })
    .default('info'),
  NODE_ENV: z
    .enum(NODE_ENVS, {
      error: (issue) => `NODE_ENV must be one of ${NODE_ENVS.join(', ')} (got '${String(issue.input)}')`,
    })
    .default('development'),
  MAX_PER_PAGE: integer('MAX_PER_PAGE', 1, 100_000, 1000),
  RATE_LIMIT_PER_MINUTE: integer('RATE_LIMIT_PER_MINUTE', 0, 1_000_000, 600),
  TRUST_PROXY: z
    .string()
    .optional()
    .transform((raw, ctx): TrustProxy => {
      if (raw === undefined || raw === 'false' || raw === '0') return false;
      if (/^\d+$/.test(raw)) {
        const hops = integerWithin(raw, 1, 32);
        if (hops !== undefined) return hops;
      } else {
        const entries = raw.split(',').map((entry) => entry.trim());
        if (entries.every(isTrustedProxyEntry)) return entries;
      }
      // `true` (express: believe any X-Forwarded-For) would let every client choose its address.
      ctx.addIssue({ code: 'custom', message: `${TRUST_PROXY_RULE} (got '${raw}')` });
      return z.NEVER;
    }),
  REDIS_URL: z
    .string()
    .optional()
    // The URL may carry a password, so the message never repeats it.
    .refine((url) => url === undefined || /^rediss?:\/\//.test(url), {
      message: 'REDIS_URL must start with redis:// or rediss://',
    }),
  REDIS_KEY_PREFIX: z
    .string()
    .default('cms:')
    .refine((prefix) => /^[A-Za-z0-9:_.-]{1,64}$/.test(prefix), {
      message: 'REDIS_KEY_PREFIX must be 1 to 64 letters, digits or any of : _ . -',
    }),
  WORKERS: integer('WORKERS', 0, MAX_WORKERS, DEFAULT_WORKERS),
  LOCKOUT_FAILURES: integer('LOCKOUT_FAILURES', 1, 1000, DEFAULT_ACCOUNT_POLICY.lockoutFailures),
  LOCKOUT_MINUTES: integer('LOCKOUT_MINUTES', 1, 10_080, DEFAULT_ACCOUNT_POLICY.lockoutMinutes),
  PASSWORD_MIN_LENGTH: integer('PASSWORD_MIN_LENGTH', 6, 128, DEFAULT_ACCOUNT_POLICY.passwordRule.minLength),
  LOGIN_THROTTLE_FAILURES: integer(
    'LOGIN_THROTTLE_FAILURES',
    1,
    100_000,
    DEFAULT_ACCOUNT_POLICY.throttleFailures,
  ),
  LOGIN_ADDRESS_FAILURES_PER_MINUTE: integer(
    'LOGIN_ADDRESS_FAILURES_PER_MINUTE',
    1,
    100_000,
    DEFAULT_ACCOUNT_POLICY.addressFailuresPerMinute,
  ),
  USER_TOKEN_SCOPES: z
    .string()
    .default('')
    .transform((text) => [
      ...new Set(
        text
          .split(',')
          .map((scope) => scope.trim())
          .filter((scope) => scope !== ''),
      ),
    ])
    .refine(
      (scopes) => scopes.every((scope) => (USER_GRANTABLE_SCOPES as readonly string[]).includes(scope)),
      {
        message: `USER_TOKEN_SCOPES must be a comma-separated list of ${USER_GRANTABLE_SCOPES.join(', ')}`,
      },
    )
    .transform((scopes) => scopes as Scope[]),
  PASSWORDLESS_LOGIN: z
    .enum(['true', 'false'], {
      error: (issue) => `PASSWORDLESS_LOGIN must be true or false (got '${String(issue.input)}')`,
    })
    .default('false'),
  SEED_DEMO: z
    .enum(['true', 'false'], {
      error: (issue) => `SEED_DEMO must be true or false (got '${String(issue.input)}')`,
    })
    .optional(),
  CREATE_DATABASE: z
    .enum(['true', 'false'], {
      error: (issue) => `CREATE_DATABASE must be true or false (got '${String(issue.input)}')`,
    })
    .optional(),
  CREDENTIAL_CACHE_SECONDS: integer('CREDENTIAL_CACHE_SECONDS', 0, 3600, 30),
  AVATAR_MAX_BYTES: integer('AVATAR_MAX_BYTES', 1024, 16 * 1024 * 1024, 2 * 1024 * 1024),
  COMPRESSION: z
    .enum(['true', 'false'], {
      error: (issue) => `COMPRESSION must be true or false (got '${String(issue.input)}')`,
    })
    .default('true'),
  COMPRESSION_MIN_BYTES: integer('COMPRESSION_MIN_BYTES', 0, 1 << 30, 1024),
  STL_SQL_MAX_ROWS: integer('STL_SQL_MAX_ROWS', 1, 100_000, 1000),
  STL_SQL_MAX_BYTES: integer('STL_SQL_MAX_BYTES', 1024, 64 * 1024 * 1024, 4 * 1024 * 1024),
  STL_SQL_TIMEOUT_MS: integer('STL_SQL_TIMEOUT_MS', 100, 60_000, 2000),
  SQLITE_QUERY_TIMEOUT_MS: integer('SQLITE_QUERY_TIMEOUT_MS', 100, 60_000, DEFAULT_SQLITE_QUERY_TIMEOUT_MS),
  EVENT_RETENTION_DAYS: integer('EVENT_RETENTION_DAYS', 1, 3650, 30),
  IDEMPOTENCY_KEY_SECONDS: integer('IDEMPOTENCY_KEY_SECONDS', 1, 7 * 86_400, 86_400),
  WEBHOOK_TIMEOUT_MS: integer('WEBHOOK_TIMEOUT_MS', 500, 60_000, 10_000),
  WEBHOOK_ALLOWED_ADDRESSES: z
    .string()
    .optional()
    .refine(
      (raw) =>
        raw === undefined || raw.trim() === '' || raw.split(',').every((a) => isAddressRange(a.trim())),
      {
        error: (issue) =>
          `WEBHOOK_ALLOWED_ADDRESSES must be a comma-separated list of IP addresses or CIDR ranges such as 10.0.0.0/8 (got '${String(issue.input)}')`,
      },
    ),
  METRICS_PORT: integer('METRICS_PORT', 1, 65535, undefined),
  METRICS_HOST: z
    .string()
    .optional()
    .refine((host) => host === undefined || /^[A-Za-z0-9.:_-]{1,253}$/.test(host), {
      message: 'METRICS_HOST must be a host name or an IP address',
    }),
  CORS_ORIGIN: z
    .string()
    .optional()
    .refine(
      (raw) => raw === undefined || raw.trim() === '*' || raw.split(',').every((o) => isOrigin(o.trim())),
      {
        error: (issue) =>
          `CORS_ORIGIN must be * or a comma-separated list of origins such as https://app.example.com (got '${String(issue.input)}')`,
      },
    )
    .transform((raw): CorsOrigins | undefined => {
      if (raw === undefined) return undefined;
      return raw.trim() === '*' ? '*' : raw.split(',').map((origin) => origin.trim());
    }),
  // Never repeated in a message: it is a credential.
  METRICS_TOKEN: z
    .string()
    .optional()
    .refine((token) => token === undefined || /^[\x21-\x7e]+$/.test(token), {
      message: 'METRICS_TOKEN must be printable ASCII without spaces',
    })
    .refine((token) => token === undefined || token.length >= MIN_METRICS_TOKEN_LENGTH, {
      message: `METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} characters long`,
    }),
});

type EnvName = keyof typeof schema.shape;

/** Reads and validates the environment; throws ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable (VAR= in a compose file) means "unset", not "invalid".
  const present: Partial<Record<EnvName, string>> = {};
  for (const name of Object.keys(schema.shape) as EnvName[]) {
    const value = env[name];
    if (value !== undefined && value !== '') present[name] = value;
  }
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => issue.message));
  const vars = parsed.data;
  const problems: string[] = [];
  if (vars.METRICS_PORT !== undefined && vars.METRICS_PORT === vars.PORT) {
    problems.push('METRICS_PORT must differ from PORT: metrics are never served on the API port');
  }
  if (
    vars.METRICS_PORT === undefined &&
    (vars.METRICS_HOST !== undefined || vars.METRICS_TOKEN !== undefined)
  ) {
    problems.push('METRICS_HOST and METRICS_TOKEN need METRICS_PORT, which turns metrics on');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    port: vars.PORT,
    databaseUrl: vars.DATABASE_URL,
    cmsSecret: vars.CMS_SECRET,
    tz: vars.TZ,
    logLevel: vars.LOG_LEVEL,
    nodeEnv: vars.NODE_ENV,
    maxPerPage: vars.MAX_PER_PAGE,
    rateLimitPerMinute: vars.RATE_LIMIT_PER_MINUTE,
    trustProxy: vars.TRUST_PROXY,
    redisUrl: vars.REDIS_URL,
    redisKeyPrefix: vars.REDIS_KEY_PREFIX,
    seedDemo:
      vars.SEED_DEMO === undefined ? vars.DATABASE_URL === DEFAULT_DATABASE_URL : vars.SEED_DEMO === 'true',
    createDatabase:
      vars.CREATE_DATABASE === undefined
        ? vars.DATABASE_URL === DEFAULT_DATABASE_URL
        : vars.CREATE_DATABASE === 'true',
    workers: vars.WORKERS,
    accounts: {
      lockoutFailures: vars.LOCKOUT_FAILURES,
      lockoutMinutes: vars.LOCKOUT_MINUTES,
      throttleFailures: vars.LOGIN_THROTTLE_FAILURES,
      addressFailuresPerMinute: vars.LOGIN_ADDRESS_FAILURES_PER_MINUTE,
      userTokenScopes: vars.USER_TOKEN_SCOPES,
      passwordlessLogin: vars.PASSWORDLESS_LOGIN === 'true',
      passwordRule: { ...DEFAULT_ACCOUNT_POLICY.passwordRule, minLength: vars.PASSWORD_MIN_LENGTH },
    },
    credentialCacheSeconds: vars.CREDENTIAL_CACHE_SECONDS,
    avatarMaxBytes: vars.AVATAR_MAX_BYTES,
    stlSqlMaxRows: vars.STL_SQL_MAX_ROWS,
    stlSqlMaxBytes: vars.STL_SQL_MAX_BYTES,
    stlSqlTimeoutMs: vars.STL_SQL_TIMEOUT_MS,
    sqliteQueryTimeoutMs: vars.SQLITE_QUERY_TIMEOUT_MS,
    corsOrigin: vars.CORS_ORIGIN,
    compressMinBytes: vars.COMPRESSION === 'true' ? vars.COMPRESSION_MIN_BYTES : undefined,
    idempotencyKeySeconds: vars.IDEMPOTENCY_KEY_SECONDS,
    events: {
      retentionDays: vars.EVENT_RETENTION_DAYS,
      webhookTimeoutMs: vars.WEBHOOK_TIMEOUT_MS,
      allowedAddresses: (vars.WEBHOOK_ALLOWED_ADDRESSES ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    },
    metrics:
      vars.METRICS_PORT === undefined
        ? undefined
        : { port: vars.METRICS_PORT, host: vars.METRICS_HOST, token: vars.METRICS_TOKEN },
  };
}

export interface EventSettings {
  /** Days an event is kept (activity log, redelivery) before the background trim deletes it. */
  retentionDays: number;
  /** Time a webhook receiver has to answer, connection included, in milliseconds. */
  webhookTimeoutMs: number;
  /** Addresses or CIDR ranges webhooks may reach although private, loopback or link-local. */
  allowedAddresses: readonly string[];
}

/** An IP address, or one with a /prefix length (a CIDR range). */
export function isAddressRange(text: string): boolean {
  const [address = '', prefix, ...rest] = text.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d{1,3}$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
}

/** The token secret of a configuration that ensureTokenSecret has completed. */
export function tokenSecretOf(config: Config): string {
  if (config.cmsSecret === undefined || config.cmsSecret.length < MIN_SECRET_LENGTH) {
    throw new Error('No token secret: resolve it with ensureTokenSecret() before serving requests');
  }
  return config.cmsSecret;
}

export const SECRET_SETTING_KEY = 'cmsSecret';

/** A token secret for a database that has none yet (384 random bits). */
export const newTokenSecret = (): string => randomBytes(48).toString('base64url');

/**
 * CMS_SECRET wins; otherwise the secret stored in SystemSetting, created on the very first start.
 * Nodes starting together race on the insert: whoever loses reads the winner's value.
 */
export async function ensureTokenSecret(config: Config, db: Db): Promise<Config & { cmsSecret: string }> {
  if (config.cmsSecret !== undefined) return { ...config, cmsSecret: config.cmsSecret };
  const candidate = newTokenSecret();
  try {
    const row = await db.systemSetting.upsert({
      where: { key: SECRET_SETTING_KEY },
      create: { key: SECRET_SETTING_KEY, value: candidate },
      update: {},
    });
    return { ...config, cmsSecret: row.value };
  } catch (error) {
    const row = await db.systemSetting.findUnique({ where: { key: SECRET_SETTING_KEY } });
    if (row === null) throw error;
    return { ...config, cmsSecret: row.value };
  }
}
