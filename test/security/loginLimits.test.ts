import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { hashPlainPassword, md5Hex } from '../../src/domain/accounts/passwords.ts';
import { DEFAULT_ACCOUNT_POLICY, LOCKOUT_FAILURES } from '../../src/domain/logins/policy.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

/*
 * Login limits that count attacks, not users (docs/security/credentials.md "Lockout and
 * throttles"): only failures count; the hard lockout is the account's for one address, so failures
 * from elsewhere never lock the owner out of their own; an account-wide throttle slows an attack
 * from many addresses. Requests come from several loopback addresses (127.0.0.x) over keep-alive
 * connections, as clients on different machines would.
 */

let app: TestApp;
let server: TypedClient;
const { throttleFailures: THROTTLE_FAILURES, lockoutFailures } = DEFAULT_ACCOUNT_POLICY;

beforeAll(async () => {
  app = await startTestApp();
  server = await startClient(app);
});
afterAll(async () => {
  for (const agent of agents.values()) agent.destroy();
  await server.close();
  await app.close();
});

const agents = new Map<string, Agent>();

/** Posts JSON from `address` (a loopback address of this machine) on a kept-alive connection. */
function postFrom(
  address: string,
  path: string,
  body: object,
): Promise<{ status: number; body: { type?: string }; retryAfter: string | undefined }> {
  let agent = agents.get(address);
  if (agent === undefined) {
    agent = new Agent({ keepAlive: true, localAddress: address });
    agents.set(address, agent);
  }
  const url = new URL(path, server.baseUrl);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (response) => {
        let answer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          answer += chunk;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: answer === '' ? {} : JSON.parse(answer),
            retryAfter: response.headers['retry-after'],
          }),
        );
      },
    );
    sent.on('error', reject);
    sent.end(text);
  });
}

let serial = 0;
async function newAccounts(kind: 'user' | 'administrator', count: number) {
  // One derivation for all: the accounts differ by name only.
  const password = 'Shared-Pass-42';
  const stored = await hashPlainPassword(password);
  const first = serial;
  serial += count;
  const names = Array.from({ length: count }, (_, i) => `${kind}-limits-${first + i}`);
  if (kind === 'user')
    await app.db.user.createMany({ data: names.map((userName) => ({ userName, ...stored })) });
  else await app.db.administrator.createMany({ data: names.map((userName) => ({ userName, ...stored })) });
  return { names, password };
}

const userLogin = (address: string, account: string, password: string) =>
  postFrom(address, '/api/v1/users/actions/login', { account, password: md5Hex(password) });
const adminLogin = (address: string, account: string, password: string) =>
  postFrom(address, '/api/v1/administrators/actions/login', { account, password: md5Hex(password) });

describe('only failures count', () => {
  test('a back end signing 100 different users in within a minute from one address: all 200', async () => {
    const { names, password } = await newAccounts('user', 100);
    const statuses: number[] = [];
    for (const name of names) statuses.push((await userLogin('127.0.0.10', name, password)).status);
    expect(statuses).toEqual(Array(100).fill(200));
  });

  test('successes between failures do not bring an address to its failure ceiling', async () => {
    const { names, password } = await newAccounts('user', 30);
    const ceiling = DEFAULT_ACCOUNT_POLICY.addressFailuresPerMinute;
    for (let i = 0; i < ceiling - 1; i += 1) {
      expect((await userLogin('127.0.0.11', `nobody-${i}`, 'Wrong-1')).status).toBe(401);
    }
    for (const name of names) expect((await userLogin('127.0.0.11', name, password)).status).toBe(200);
    expect((await userLogin('127.0.0.11', 'nobody-last', 'Wrong-1')).status).toBe(401);
    const limited = await userLogin('127.0.0.11', names[0] ?? '', password);
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
  });
});

describe('the lockout is the account’s for one address', () => {
  for (const kind of ['user', 'administrator'] as const) {
    test(`${LOCKOUT_FAILURES} anonymous failures from elsewhere do not lock the ${kind} out of their own address`, async () => {
      const login = kind === 'user' ? userLogin : adminLogin;
      const { names, password } = await newAccounts(kind, 1);
      const account = names[0] ?? '';
      const attacker = kind === 'user' ? '127.0.0.20' : '127.0.0.21';
      for (let i = 0; i < LOCKOUT_FAILURES; i += 1) {
        expect((await login(attacker, account, `Guess-${i}`)).status).toBe(401);
      }
      // The attacker's address is locked out of the account, even with the right password ...
      const locked = await login(attacker, account, password);
      expect(locked.status).toBe(401);
      expect(locked.body.type).toBe(`${PROBLEM_TYPE_BASE}login-failed`);
      // ... while the owner, from their own address, signs in.
      expect((await login('127.0.0.22', account, password)).status).toBe(200);
    });
  }
});

describe('guesses sent at once', () => {
  test('20 wrong passwords at once from one address: no more than the lockout are checked', async () => {
    const { names } = await newAccounts('user', 1);
    const account = names[0] ?? '';
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => userLogin('127.0.0.50', account, `Guess-${i}`)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(401));
    // Attempts are counted before the password is checked, so the ones past the lockout never are.
    const row = await app.db.user.findUniqueOrThrow({ where: { userName: account } });
    expect(row.countOfFailedLogin).toBeLessThanOrEqual(lockoutFailures);
    expect(row.countOfFailedLogin).toBeGreaterThan(0);
  });
});

describe('the account-wide throttle', () => {
  test(`past ${THROTTLE_FAILURES} failures from any addresses, addresses that failed get 429; the owner's does not`, async () => {
    const { names, password } = await newAccounts('administrator', 1);
    const account = names[0] ?? '';
    // Spread over addresses so that none reaches its own lockout.
    for (let i = 0; i < THROTTLE_FAILURES; i += 1) {
      const address = `127.0.0.${30 + (i % 5)}`;
      expect((await adminLogin(address, account, `Guess-${i}`)).status).toBe(401);
    }
    expect(THROTTLE_FAILURES / 5).toBeLessThan(lockoutFailures);
    const throttled = await adminLogin('127.0.0.30', account, 'Guess-2');
    expect(throttled.status).toBe(429);
    expect(throttled.body.type).toBe(`${PROBLEM_TYPE_BASE}rate-limited`);
    expect(Number(throttled.retryAfter)).toBeGreaterThan(0);
    // Even the right password from a throttled address waits ...
    expect((await adminLogin('127.0.0.31', account, password)).status).toBe(429);
    // ... while the owner's address, which has not failed, signs in, and that success ends the throttle.
    expect((await adminLogin('127.0.0.40', account, password)).status).toBe(200);
    expect((await adminLogin('127.0.0.30', account, 'Guess-3')).status).toBe(401);
  });
});
