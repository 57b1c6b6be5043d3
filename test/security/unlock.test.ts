import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { hashPlainPassword, md5Hex } from '../../src/domain/accounts/passwords.ts';
import { DEFAULT_ACCOUNT_POLICY, LOCKOUT_FAILURES } from '../../src/domain/logins/policy.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { type SecondApp, startSecondApp, startTestApp, type TestApp } from '../support/app.ts';

/*
 * An unlock through the API really unlocks (docs/security/credentials.md "Lockout and throttles"):
 * the lockouts of every address, by every name of the account, and the account-wide throttle are
 * lifted in the shared state, on every node, by a caller allowed to hand the account over; a caller
 * that is not is refused and the lockouts stay. Two nodes over one database, each with a state of
 * its own: in the database, and in Redis when TEST_REDIS_URL is set. Addresses are X-Forwarded-For
 * from the loopback proxy.
 */

const redisUrl = process.env.TEST_REDIS_URL;

/**
 * The service's client gives up on a command after a second and the counters then fail open; on a
 * busy test machine that would let a locked-out address in. This test is about lockouts holding,
 * so its clients wait longer.
 */
function patientRedis(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 15_000, lazyConnect: true });
  redis.on('error', () => {});
  return redis;
}

const stores: [string, string | undefined][] = [
  ['the database', undefined],
  ...(redisUrl === undefined ? [] : [['Redis', redisUrl] as [string, string]]),
];

const FORBIDDEN = `${PROBLEM_TYPE_BASE}forbidden`;
const LOGIN_FAILED = `${PROBLEM_TYPE_BASE}login-failed`;

describe.each(stores)('an unlock lifts the lockouts (shared state in %s)', (_store, url) => {
  let first: TestApp;
  let second: SecondApp;
  let secondHandle: DbHandle | undefined;
  const clients: Redis[] = [];
  // Keys for each kind: one that may hand the account over, one that may not.
  const keys = { user: { may: '', mayNot: '' }, administrator: { may: '', mayNot: '' } };

  beforeAll(async () => {
    const config = {
      trustProxy: ['loopback'],
      // The lockout and the throttle are under test, not the per-address ceiling.
      accounts: { ...DEFAULT_ACCOUNT_POLICY, addressFailuresPerMinute: 10_000 },
    };
    if (url === undefined) {
      first = await startTestApp({ config });
      secondHandle = await createDb(first.config.databaseUrl);
      second = await startSecondApp(first, { db: secondHandle });
    } else {
      clients.push(patientRedis(url), patientRedis(url));
      first = await startTestApp({ config, redis: clients[0] as Redis });
      second = await startSecondApp(first, { redis: clients[1] as Redis });
    }
    keys.user = {
      may: await first.createApiKey(['Users', 'Contents', 'Channels']),
      mayNot: await first.createApiKey(['Users']),
    };
    keys.administrator = {
      may: await first.createApiKey('all'),
      mayNot: await first.createApiKey(['Administrators']),
    };
  }, 60_000);
  afterAll(async () => {
    await second?.close();
    await secondHandle?.db.$disconnect();
    await first?.close();
    for (const client of clients) await client.quit();
  });

  let serial = 0;
  /** A new account with a user name, an e-mail and a password. */
  async function newAccount(kind: 'user' | 'administrator') {
    serial += 1;
    const userName = `${kind}-unlock-${serial}`;
    const password = `Unlock-Pass-${serial}`;
    const data = { userName, email: `${userName}@example.com`, ...(await hashPlainPassword(password)) };
    const row =
      kind === 'user' ? await first.db.user.create({ data }) : await first.db.administrator.create({ data });
    return { id: row.id, userName, email: data.email, password };
  }

  /** A login on the first node from `address`. */
  const login = (kind: 'user' | 'administrator', address: string, account: string, password: string) =>
    first.request
      .post(`/api/v1/${kind}s/actions/login`)
      .set('X-Forwarded-For', address)
      .send({ account, password: md5Hex(password) });

  /** An unlock on the second node, with the key that may (or may not) hand the account over. */
  const unlock = (kind: 'user' | 'administrator', id: number, may: 'may' | 'mayNot') =>
    second.request
      .post(`/api/v1/${kind}s/${id}/actions/update`)
      .set('X-SS-API-KEY', keys[kind][may])
      .send(kind === 'user' ? { locked: 'false' } : { isLockedOut: 'false' });

  /** LOCKOUT_FAILURES wrong passwords from `address`: that address is then locked out of the account. */
  async function lockOut(kind: 'user' | 'administrator', address: string, account: string) {
    for (let i = 0; i < LOCKOUT_FAILURES; i += 1) {
      expect((await login(kind, address, account, `Guess-${i}`)).status).toBe(401);
    }
  }

  for (const kind of ['user', 'administrator'] as const) {
    test(`${kind}: locked out from two addresses by two of its names, unlocked: the owner logs in at once from each`, async () => {
      const account = await newAccount(kind);
      await lockOut(kind, '10.1.0.1', account.userName);
      await lockOut(kind, '10.1.0.2', account.email);
      // Each address is locked out by the name it guessed, even with the right password ...
      for (const [address, name] of [
        ['10.1.0.1', account.userName],
        ['10.1.0.2', account.email],
      ] as const) {
        const refused = await login(kind, address, name, account.password);
        expect(refused.status).toBe(401);
        expect(refused.body.type).toBe(LOGIN_FAILED);
      }
      const unlocked = await unlock(kind, account.id, 'may');
      expect(unlocked.status).toBe(200);
      // ... and in at once after the unlock, made on the other node.
      for (const [address, name] of [
        ['10.1.0.1', account.userName],
        ['10.1.0.2', account.email],
      ] as const) {
        const { status, body } = await login(kind, address, name, account.password);
        expect(status).toBe(200);
        expect(typeof body.accessToken).toBe('string');
      }
    });

    test(`${kind}: an unlock also ends the account-wide throttle`, async () => {
      const account = await newAccount(kind);
      const { throttleFailures } = DEFAULT_ACCOUNT_POLICY;
      // Spread over addresses so that none reaches its own lockout.
      const spread = 5;
      expect(throttleFailures / spread).toBeLessThan(LOCKOUT_FAILURES);
      for (let i = 0; i < throttleFailures; i += 1) {
        expect((await login(kind, `10.2.0.${i % spread}`, account.userName, `Guess-${i}`)).status).toBe(401);
      }
      const throttled = await login(kind, '10.2.0.1', account.userName, account.password);
      expect(throttled.status).toBe(429);
      expect((await unlock(kind, account.id, 'may')).status).toBe(200);
      expect((await login(kind, '10.2.0.1', account.userName, account.password)).status).toBe(200);
    });

    test(`${kind}: a caller that may not hand the account over cannot unlock it: 403, the lockout stays`, async () => {
      const account = await newAccount(kind);
      await lockOut(kind, '10.3.0.1', account.userName);
      const refused = await unlock(kind, account.id, 'mayNot');
      expect(refused.status).toBe(403);
      expect(refused.body.type).toBe(FORBIDDEN);
      expect(refused.body.detail).toMatch(
        kind === 'user' ? /^Unlocking a user would hand over/ : /^Unlocking an administrator would hand over/,
      );
      expect((await login(kind, '10.3.0.1', account.userName, account.password)).status).toBe(401);
      // The owner's own address was never locked out.
      expect((await login(kind, '10.3.0.2', account.userName, account.password)).status).toBe(200);
    });

    test(`${kind}: after an unlock, wrong passwords lock the address again; a second unlock lifts that too`, async () => {
      const account = await newAccount(kind);
      await lockOut(kind, '10.4.0.1', account.userName);
      expect((await unlock(kind, account.id, 'may')).status).toBe(200);
      await lockOut(kind, '10.4.0.1', account.userName);
      expect((await login(kind, '10.4.0.1', account.userName, account.password)).status).toBe(401);
      // Locked again: a caller that may not hand the account over is refused again.
      expect((await unlock(kind, account.id, 'mayNot')).status).toBe(403);
      expect((await unlock(kind, account.id, 'may')).status).toBe(200);
      expect((await login(kind, '10.4.0.1', account.userName, account.password)).status).toBe(200);
    });
  }

  test('with nothing locked out, "false" sent back by a caller that may not unlock changes nothing: 200', async () => {
    const account = await newAccount('administrator');
    const sentBack = await unlock('administrator', account.id, 'mayNot');
    expect(sentBack.status).toBe(200);
    expect(sentBack.body.value.isLockedOut).toBe(false);
  });
});
