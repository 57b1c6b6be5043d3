import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Redis } from 'ioredis';
import supertest from 'supertest';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { freePort, post, type Service, startService, stopService } from '../process/processes.ts';
import { startTestApp, TEST_SECRET, type TestApp } from '../support/app.ts';
import { type CaptchaHarness, captchaCookieOf, captchaHarness, testRedis } from './support.ts';

/*
 * Single use holds across processes: process A is this test's app (its code generator tells the
 * test each code), process B a real server (`src/main.ts`) started on the same database — and the
 * same Redis with TEST_REDIS_URL — with the same CMS_SECRET, as two nodes behind a load balancer.
 */

const INVALID = `${PROBLEM_TYPE_BASE}captcha-invalid`;

let harness: CaptchaHarness;
let redis: Redis | undefined;
let a: TestApp;
let b: Service | undefined;
let bPort: number;

beforeAll(async () => {
  harness = captchaHarness();
  redis = await testRedis();
  a = await startTestApp({ handlers: harness.handlers, logger: harness.logger, ...(redis && { redis }) });
  bPort = await freePort();
  b = startService({
    PORT: String(bPort),
    DATABASE_URL: a.config.databaseUrl,
    CMS_SECRET: TEST_SECRET,
    SEED_DEMO: 'false',
    ...(process.env.TEST_REDIS_URL && {
      REDIS_URL: process.env.TEST_REDIS_URL,
      REDIS_KEY_PREFIX: a.config.redisKeyPrefix,
    }),
  });
  await b.waitFor(/"msg":"listening"/);
});
afterAll(async () => {
  await stopService(b);
  await a.close();
  await redis?.quit();
});

const CHECK = '/api/v1/captcha/login/actions/check';

function checkOnA(captcha: string, cookie: string) {
  return supertest(a.app).post(CHECK).set('Cookie', `ss-captcha=${cookie}`).send({ captcha });
}

function checkOnB(captcha: string, cookie: string) {
  return post(bPort, CHECK, { captcha }, { Cookie: `ss-captcha=${cookie}` });
}

test('an image of A is checked once on B; A and B then both refuse it', async () => {
  const image = await supertest(a.app).get('/api/v1/captcha/login');
  expect(image.status).toBe(200);
  const cookie = captchaCookieOf(image.headers['set-cookie']);
  const code = harness.lastCode();

  expect(await checkOnB(code, cookie)).toEqual({ status: 200, json: { value: true } });
  const again = await checkOnA(code, cookie);
  expect(again.status).toBe(400);
  expect(again.body).toMatchObject({
    type: INVALID,
    detail: 'This captcha has already been checked; fetch a new image',
  });
  expect(await checkOnB(code, cookie)).toEqual({
    status: 400,
    json: expect.objectContaining({
      type: INVALID,
      detail: 'This captcha has already been checked; fetch a new image',
    }),
  });
  // B logged the checks, and neither the code nor the cookie with them.
  expect(b?.output()).toContain(CHECK);
  expect(b?.output()).not.toContain(cookie);
  expect(b?.output().toUpperCase()).not.toMatch(new RegExp(`\\b${code}\\b`));
});

test('an image of B is read by A (same secret), and a check on A uses it up on B', async () => {
  const image = await fetch(`http://127.0.0.1:${bPort}/api/v1/captcha/login`);
  expect(image.status).toBe(200);
  expect(image.headers.get('content-type')).toBe('image/png');
  expect(image.headers.get('cache-control')).toBe('no-store');
  const cookie = captchaCookieOf(image.headers.getSetCookie());
  // No code can be known from B: a wrong answer on A is judged (the signature holds) and spends it.
  const wrong = await checkOnA('####', cookie);
  expect(wrong.status).toBe(400);
  expect(wrong.body.detail).toBe('The captcha answer is wrong; fetch a new image');
  expect(await checkOnB('####', cookie)).toEqual({
    status: 400,
    json: expect.objectContaining({ detail: 'This captcha has already been checked; fetch a new image' }),
  });
});
