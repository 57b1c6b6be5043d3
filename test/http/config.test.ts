import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ConfigError, ensureTokenSecret, loadConfig, SECRET_SETTING_KEY } from '../../src/config.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  test('defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      databaseUrl: 'file:./data/cms.db',
      cmsSecret: undefined,
      tz: undefined,
      logLevel: 'info',
      nodeEnv: 'development',
      maxPerPage: 1000,
      rateLimitPerMinute: 600,
      trustProxy: false,
      redisUrl: undefined,
      redisKeyPrefix: 'cms:',
      seedDemo: true,
      createDatabase: true,
      workers: 2,
      accounts: {
        lockoutFailures: 5,
        lockoutMinutes: 15,
        throttleFailures: 20,
        addressFailuresPerMinute: 10,
        userTokenScopes: [],
        passwordlessLogin: false,
        passwordRule: { minLength: 6, letter: true, digit: true },
      },
      credentialCacheSeconds: 30,
      stlSqlMaxBytes: 4 * 1024 * 1024,
      stlSqlMaxRows: 1000,
      stlSqlTimeoutMs: 2000,
      sqliteQueryTimeoutMs: 2000,
      compressMinBytes: 1024,
      events: { retentionDays: 30, webhookTimeoutMs: 10_000, allowedAddresses: [] },
      avatarMaxBytes: 2 * 1024 * 1024,
      idempotencyKeySeconds: 86_400,
    });
  });

  test('reads every variable', () => {
    const secret = 's'.repeat(32);
    expect(
      loadConfig({
        PORT: '8080',
        DATABASE_URL: 'postgresql://cms@db:5432/cms',
        CMS_SECRET: secret,
        TZ: 'Asia/Shanghai',
        LOG_LEVEL: 'debug',
        NODE_ENV: 'production',
        MAX_PER_PAGE: '500',
        RATE_LIMIT_PER_MINUTE: '0',
        TRUST_PROXY: '1',
        REDIS_URL: 'redis://:pw@cache:6379/2',
        REDIS_KEY_PREFIX: 'cms-staging:',
        AVATAR_MAX_BYTES: '65536',
        IDEMPOTENCY_KEY_SECONDS: '3600',
        SEED_DEMO: 'true',
        CREATE_DATABASE: 'true',
        WORKERS: '4',
        LOCKOUT_FAILURES: '3',
        LOCKOUT_MINUTES: '60',
        PASSWORD_MIN_LENGTH: '12',
        LOGIN_THROTTLE_FAILURES: '40',
        LOGIN_ADDRESS_FAILURES_PER_MINUTE: '200',
        USER_TOKEN_SCOPES: 'Contents, STL,Contents',
        PASSWORDLESS_LOGIN: 'true',
        CREDENTIAL_CACHE_SECONDS: '0',
        STL_SQL_MAX_ROWS: '50',
        STL_SQL_TIMEOUT_MS: '500',
        SQLITE_QUERY_TIMEOUT_MS: '750',
        COMPRESSION_MIN_BYTES: '4096',
        EVENT_RETENTION_DAYS: '7',
        WEBHOOK_TIMEOUT_MS: '2500',
        WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1, 10.0.0.0/8,fd00::/8',
      }),
    ).toEqual({
      port: 8080,
      databaseUrl: 'postgresql://cms@db:5432/cms',
      cmsSecret: secret,
      tz: 'Asia/Shanghai',
      logLevel: 'debug',
      nodeEnv: 'production',
      maxPerPage: 500,
      rateLimitPerMinute: 0,
      trustProxy: 1,
      redisUrl: 'redis://:pw@cache:6379/2',
      redisKeyPrefix: 'cms-staging:',
      seedDemo: true,
      createDatabase: true,
      workers: 4,
      accounts: {
        lockoutFailures: 3,
        lockoutMinutes: 60,
        throttleFailures: 40,
        addressFailuresPerMinute: 200,
        userTokenScopes: ['Contents', 'STL'],
        passwordlessLogin: true,
        passwordRule: { minLength: 12, letter: true, digit: true },
      },
      credentialCacheSeconds: 0,
      stlSqlMaxBytes: 4 * 1024 * 1024,
      stlSqlMaxRows: 50,
      stlSqlTimeoutMs: 500,
      sqliteQueryTimeoutMs: 750,
      compressMinBytes: 4096,
      events: {
        retentionDays: 7,
        webhookTimeoutMs: 2500,
        allowedAddresses: ['127.0.0.1', '10.0.0.0/8', 'fd00::/8'],
      },
      avatarMaxBytes: 65_536,
      idempotencyKeySeconds: 3600,
    });
    expect(loadConfig({ DATABASE_URL: 'postgres://h/d' }).databaseUrl).toBe('postgres://h/d');
  });

  test('the demo is seeded by default only on the embedded default SQLite file', () => {
    expect(loadConfig({}).seedDemo).toBe(true);
    expect(loadConfig({ DATABASE_URL: 'file:./data/cms.db' }).seedDemo).toBe(true);
    expect(loadConfig({ SEED_DEMO: 'false' }).seedDemo).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'file:/srv/cms/site.db' }).seedDemo).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'postgresql://cms@db:5432/cms' }).seedDemo).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'postgresql://cms@db:5432/cms', SEED_DEMO: 'true' }).seedDemo).toBe(
      true,
    );
    expect(loadConfig({ SEED_DEMO: '' }).seedDemo).toBe(true);
  });

  test('a missing database is created by default only for the embedded default SQLite file', () => {
    expect(loadConfig({}).createDatabase).toBe(true);
    expect(loadConfig({ DATABASE_URL: 'file:/srv/cms/site.db' }).createDatabase).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'postgresql://cms@db:5432/cms' }).createDatabase).toBe(false);
    expect(
      loadConfig({ DATABASE_URL: 'postgresql://cms@db:5432/cms', CREATE_DATABASE: 'true' }).createDatabase,
    ).toBe(true);
    expect(loadConfig({ CREATE_DATABASE: 'false' }).createDatabase).toBe(false);
    expect(problemsOf({ CREATE_DATABASE: 'yes' })).toEqual([
      "CREATE_DATABASE must be true or false (got 'yes')",
    ]);
  });

  test('COMPRESSION=false turns compression off whatever the threshold; other values are refused', () => {
    expect(
      loadConfig({ COMPRESSION: 'false', COMPRESSION_MIN_BYTES: '10' }).compressMinBytes,
    ).toBeUndefined();
    expect(loadConfig({ COMPRESSION: 'true', COMPRESSION_MIN_BYTES: '0' }).compressMinBytes).toBe(0);
    expect(() => loadConfig({ COMPRESSION: 'off' })).toThrow('COMPRESSION must be true or false');
    expect(() => loadConfig({ COMPRESSION_MIN_BYTES: '-1' })).toThrow('COMPRESSION_MIN_BYTES');
  });

  test('WORKERS=0 means a single process without supervisor; 1 is one supervised worker', () => {
    expect(loadConfig({ WORKERS: '0' }).workers).toBe(0);
    expect(loadConfig({ WORKERS: '1' }).workers).toBe(1);
    expect(loadConfig({ WORKERS: '64' }).workers).toBe(64);
    expect(loadConfig({ WORKERS: '' }).workers).toBe(2);
  });

  test('TRUST_PROXY: off by default, a hop count, or a list of addresses, ranges and named ranges', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8, 192.168.1.7' }).trustProxy).toEqual([
      'loopback',
      '10.0.0.0/8',
      'fd00::/8',
      '192.168.1.7',
    ]);
  });

  test('an empty variable counts as unset', () => {
    expect(loadConfig({ PORT: '', CMS_SECRET: '', TZ: '' })).toMatchObject({
      port: 3000,
      cmsSecret: undefined,
      tz: undefined,
    });
  });

  test.each([
    [{ PORT: 'http' }, "PORT must be an integer from 1 to 65535 (got 'http')"],
    [{ PORT: '0' }, "PORT must be an integer from 1 to 65535 (got '0')"],
    [{ PORT: '70000' }, "PORT must be an integer from 1 to 65535 (got '70000')"],
    [{ PORT: '80.5' }, "PORT must be an integer from 1 to 65535 (got '80.5')"],
    [
      { DATABASE_URL: 'mysql://u:pw@h/d' },
      'DATABASE_URL must start with file: (SQLite) or postgresql:// (PostgreSQL)',
    ],
    [{ CMS_SECRET: 'short' }, 'CMS_SECRET must be at least 32 characters long'],
    [{ SEED_DEMO: 'yes' }, "SEED_DEMO must be true or false (got 'yes')"],
    [{ REDIS_KEY_PREFIX: 'cms prod' }, 'REDIS_KEY_PREFIX must be 1 to 64 letters, digits or any of : _ . -'],
    [{ TZ: 'Mars/Olympus' }, "TZ must be an IANA time zone name such as Europe/Paris (got 'Mars/Olympus')"],
    [{ TZ: '+01:00' }, "TZ must be an IANA time zone name such as Europe/Paris (got '+01:00')"],
    [
      { LOG_LEVEL: 'verbose' },
      "LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got 'verbose')",
    ],
    [{ MAX_PER_PAGE: '-1' }, "MAX_PER_PAGE must be an integer from 1 to 100000 (got '-1')"],
    [
      { RATE_LIMIT_PER_MINUTE: 'many' },
      "RATE_LIMIT_PER_MINUTE must be an integer from 0 to 1000000 (got 'many')",
    ],
    [
      { TRUST_PROXY: 'true' },
      "TRUST_PROXY must be a hop count from 1 to 32, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal (got 'true')",
    ],
    [
      { TRUST_PROXY: '10.0.0.0/33' },
      "TRUST_PROXY must be a hop count from 1 to 32, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal (got '10.0.0.0/33')",
    ],
    [
      { TRUST_PROXY: '99' },
      "TRUST_PROXY must be a hop count from 1 to 32, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal (got '99')",
    ],
    [{ REDIS_URL: 'http://:secret@cache' }, 'REDIS_URL must start with redis:// or rediss://'],
    [{ WORKERS: '65' }, "WORKERS must be an integer from 0 to 64 (got '65')"],
    [{ LOCKOUT_FAILURES: '0' }, "LOCKOUT_FAILURES must be an integer from 1 to 1000 (got '0')"],
    [{ LOCKOUT_MINUTES: 'soon' }, "LOCKOUT_MINUTES must be an integer from 1 to 10080 (got 'soon')"],
    [{ PASSWORD_MIN_LENGTH: '4' }, "PASSWORD_MIN_LENGTH must be an integer from 6 to 128 (got '4')"],
    [
      { LOGIN_THROTTLE_FAILURES: '0' },
      "LOGIN_THROTTLE_FAILURES must be an integer from 1 to 100000 (got '0')",
    ],
    [
      { LOGIN_ADDRESS_FAILURES_PER_MINUTE: 'lots' },
      "LOGIN_ADDRESS_FAILURES_PER_MINUTE must be an integer from 1 to 100000 (got 'lots')",
    ],
    [
      { USER_TOKEN_SCOPES: 'Contents,Users' },
      'USER_TOKEN_SCOPES must be a comma-separated list of Contents, Channels, STL',
    ],
    [{ PASSWORDLESS_LOGIN: 'yes' }, "PASSWORDLESS_LOGIN must be true or false (got 'yes')"],
    [{ WORKERS: '-1' }, "WORKERS must be an integer from 0 to 64 (got '-1')"],
    [{ WORKERS: 'auto' }, "WORKERS must be an integer from 0 to 64 (got 'auto')"],
    [{ STL_SQL_MAX_ROWS: '0' }, "STL_SQL_MAX_ROWS must be an integer from 1 to 100000 (got '0')"],
    [{ STL_SQL_MAX_ROWS: 'all' }, "STL_SQL_MAX_ROWS must be an integer from 1 to 100000 (got 'all')"],
    [{ STL_SQL_TIMEOUT_MS: '50' }, "STL_SQL_TIMEOUT_MS must be an integer from 100 to 60000 (got '50')"],
    [{ STL_SQL_TIMEOUT_MS: '2s' }, "STL_SQL_TIMEOUT_MS must be an integer from 100 to 60000 (got '2s')"],
    [
      { SQLITE_QUERY_TIMEOUT_MS: '0' },
      "SQLITE_QUERY_TIMEOUT_MS must be an integer from 100 to 60000 (got '0')",
    ],
    [{ EVENT_RETENTION_DAYS: '0' }, "EVENT_RETENTION_DAYS must be an integer from 1 to 3650 (got '0')"],
    [
      { WEBHOOK_ALLOWED_ADDRESSES: '10.0.0.0/33' },
      "WEBHOOK_ALLOWED_ADDRESSES must be a comma-separated list of IP addresses or CIDR ranges such as 10.0.0.0/8 (got '10.0.0.0/33')",
    ],
  ])('%j is refused: %s', (env, message) => {
    expect(problemsOf(env)).toEqual([message]);
  });

  test('every problem is reported at once, and secrets are never repeated', () => {
    const error = (() => {
      try {
        loadConfig({ PORT: 'x', DATABASE_URL: 'mysql://root:hunter2@h/d', CMS_SECRET: 'tooshort-secret' });
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.problems).toHaveLength(3);
    expect(error.message).toContain('PORT must be');
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('tooshort-secret');
  });
});

describe('ensureTokenSecret', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  test('CMS_SECRET wins and nothing is stored', async () => {
    const secret = 'c'.repeat(40);
    const config = await ensureTokenSecret({ ...loadConfig({}), cmsSecret: secret }, database.handle.db);
    expect(config.cmsSecret).toBe(secret);
    expect(
      await database.handle.db.systemSetting.findUnique({ where: { key: SECRET_SETTING_KEY } }),
    ).toBeNull();
  });

  test('without CMS_SECRET a secret is generated once, stored, and shared by every later start', async () => {
    const first = await ensureTokenSecret(loadConfig({}), database.handle.db);
    expect(first.cmsSecret.length).toBeGreaterThanOrEqual(32);
    const stored = await database.handle.db.systemSetting.findUniqueOrThrow({
      where: { key: SECRET_SETTING_KEY },
    });
    expect(stored.value).toBe(first.cmsSecret);
    const [second, third] = await Promise.all([
      ensureTokenSecret(loadConfig({}), database.handle.db),
      ensureTokenSecret(loadConfig({}), database.handle.db),
    ]);
    expect(second.cmsSecret).toBe(first.cmsSecret);
    expect(third.cmsSecret).toBe(first.cmsSecret);
  });
});
