import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Redis } from 'ioredis';
import { PNG } from 'pngjs';
import supertest from 'supertest';
import { CAPTCHA_CHECKS_PER_MINUTE } from '../../src/domain/captcha/captcha.ts';
import { CODE_ALPHABET } from '../../src/domain/captcha/glyphs.ts';
import { signCaptchaToken } from '../../src/domain/captcha/token.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { createCheckCaptcha } from '../../src/operations/captcha/checkCaptcha.ts';
import { SharedStateUnavailable } from '../../src/state/port.ts';
import { startTestApp, TEST_SECRET, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { type CaptchaHarness, captchaCookieOf, captchaHarness, testRedis } from './support.ts';

/*
 * The captcha over HTTP, on the run's database (and Redis with TEST_REDIS_URL): the image and its
 * cookie, then every outcome of a check. The codes come from the harness's generator; the
 * responses never carry one.
 */

const INVALID = `${PROBLEM_TYPE_BASE}captcha-invalid`;

let harness: CaptchaHarness;
let redis: Redis | undefined;
let app: TestApp;
let http: TypedClient;

beforeAll(async () => {
  harness = captchaHarness({ checksPerMinute: 1000 });
  redis = await testRedis();
  app = await startTestApp({
    handlers: harness.handlers,
    logger: harness.logger,
    ...(redis && { redis }),
  });
  http = await startClient(app);
});
afterAll(async () => {
  await http.close();
  await app.close();
  await redis?.quit();
});

/** GET of an image, its body kept as bytes. */
function getImage(path: string) {
  return supertest(app.app)
    .get(path)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
}

/** A fresh image of `name`: its cookie value, and the code the harness drew for it. */
async function fetchCaptcha(name = 'login'): Promise<{ cookie: string; code: string }> {
  const response = await getImage(`/api/v1/captcha/${name}`);
  expect(response.status).toBe(200);
  return { cookie: captchaCookieOf(response.headers['set-cookie']), code: harness.lastCode() };
}

function check(name: string, captcha: string, cookie?: string) {
  return http.client.POST('/api/v1/captcha/{name}/actions/check', {
    params: { path: { name } },
    body: { captcha },
    ...(cookie !== undefined && { headers: { Cookie: `ss-captcha=${cookie}` } }),
  });
}

async function expectInvalid(answer: ReturnType<typeof check>, detail: string): Promise<void> {
  const { response, error } = await answer;
  expect(response.status).toBe(400);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(error).toEqual({ type: INVALID, title: 'Bad Request', status: 400, detail, message: detail });
}

const USED = 'This captcha has already been checked; fetch a new image';
const WRONG = 'The captcha answer is wrong; fetch a new image';
const FORGED = 'The ss-captcha cookie is not valid; fetch a new image';

describe('get captcha', () => {
  test('a 120×40 PNG, never cached, with an HttpOnly SameSite=Lax cookie for the captcha path', async () => {
    const response = await getImage('/api/v1/captcha/login');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('image/png');
    expect(response.headers['cache-control']).toBe('no-store');
    const bytes = response.body as Buffer;
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const image = PNG.sync.read(bytes);
    expect([image.width, image.height]).toEqual([120, 40]);
    // Not a blank picture: a good share of its pixels are dark (the glyphs, lines and dots).
    let dark = 0;
    for (let at = 0; at < image.data.length; at += 4) {
      if ((image.data[at] ?? 255) < 128) dark++;
    }
    expect(dark).toBeGreaterThan(150);
    expect(dark).toBeLessThan(120 * 40 * 0.5);

    const cookies = [response.headers['set-cookie'] ?? []].flat();
    expect(cookies).toHaveLength(1);
    const [pair, ...attributes] = (cookies[0] ?? '').split('; ');
    expect(pair).toMatch(/^ss-captcha=v1\.[\w-]+\.[\w-]{43}$/);
    expect(attributes).toEqual([
      'Max-Age=600',
      'Path=/api/v1/captcha',
      expect.stringMatching(/^Expires=/),
      'HttpOnly',
      'SameSite=Lax',
    ]);
  });

  test('the cookie names the captcha and its expiry, and holds no code', async () => {
    const { cookie, code } = await fetchCaptcha('register');
    expect(code).toMatch(new RegExp(`^[${CODE_ALPHABET}]{4}$`));
    const claims = JSON.parse(Buffer.from(cookie.split('.')[1] ?? '', 'base64url').toString('utf8'));
    expect(Object.keys(claims).sort()).toEqual(['exp', 'hash', 'id', 'name']);
    expect(claims.name).toBe('register');
    expect(claims.exp).toBeGreaterThan(Date.now() + 590_000);
    expect(claims.exp).toBeLessThanOrEqual(Date.now() + 600_000);
    expect(claims.id).toMatch(/^[\w-]{22}$/);
    expect(cookie.toUpperCase()).not.toContain(code);
    expect(JSON.stringify(claims).toUpperCase()).not.toContain(code);
  });

  test('every image has a new captcha id', async () => {
    const ids = new Set<string>();
    for (let n = 0; n < 5; n++) ids.add((await fetchCaptcha()).cookie.split('.')[1] ?? '');
    expect(ids.size).toBe(5);
  });

  test('a name outside the pattern is a 400 naming the path parameter', async () => {
    const response = await supertest(app.app).get('/api/v1/captcha/log%20in');
    expect(response.status).toBe(400);
    expect(response.body.type).toBe(`${PROBLEM_TYPE_BASE}validation`);
    expect(response.body.errors).toEqual([expect.objectContaining({ path: '/path/name' })]);
    expect(response.headers['set-cookie']).toBeUndefined();
  });
});

describe('check captcha', () => {
  test('the right answer is { value: true } once; the same image again is a 400', async () => {
    const { cookie, code } = await fetchCaptcha();
    const first = await check('login', code, cookie);
    expect(first.response.status).toBe(200);
    expect(first.data).toEqual({ value: true });
    await expectInvalid(check('login', code, cookie), USED);
  });

  test('answers ignore case and surrounding spaces', async () => {
    const { cookie, code } = await fetchCaptcha();
    const { data } = await check('login', ` ${code.toLowerCase()} `, cookie);
    expect(data).toEqual({ value: true });
  });

  test('a wrong answer is a 400 and uses the image up: the right answer after it is refused', async () => {
    const { cookie, code } = await fetchCaptcha();
    const wrong = code === 'AAAA' ? 'BBBB' : 'AAAA';
    await expectInvalid(check('login', wrong, cookie), WRONG);
    await expectInvalid(check('login', code, cookie), USED);
  });

  test('an image is valid for 10 minutes, then a 400', async () => {
    const late = await fetchCaptcha();
    const inTime = await fetchCaptcha();
    // 30 s of slack: a loaded machine may take a second or more between fetching and checking.
    harness.advance(600_000 - 30_000);
    try {
      expect((await check('login', inTime.code, inTime.cookie)).data).toEqual({ value: true });
      harness.advance(30_000);
      await expectInvalid(
        check('login', late.code, late.cookie),
        'This captcha has expired; fetch a new image',
      );
    } finally {
      harness.advance(-600_000);
    }
  });

  test('without the cookie: 400', async () => {
    await fetchCaptcha();
    await expectInvalid(
      check('login', harness.lastCode()),
      'No captcha to check (the ss-captcha cookie is missing); fetch an image first',
    );
  });

  test('a cookie of another name is a 400 that does not use the image up', async () => {
    const { cookie, code } = await fetchCaptcha('login');
    await expectInvalid(
      check('register', code, cookie),
      'The ss-captcha cookie belongs to another captcha; fetch a new image',
    );
    expect((await check('login', code, cookie)).data).toEqual({ value: true });
  });

  test('an altered or forged cookie is a 400, and does not use the image up', async () => {
    const { cookie, code } = await fetchCaptcha();
    const [version, payload, signature] = cookie.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const later = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 3_600_000 })).toString(
      'base64url',
    );
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const forged of [
      `${version}.${later}.${signature}`,
      `${version}.${payload}.${flipped}`,
      `v2.${payload}.${signature}`,
      `${version}.${payload}`,
      'not-a-token',
      // Signed like the service's, with another secret and a code of the forger's choosing.
      signCaptchaToken({ name: 'login', code: 'AAAA', expiresAt: Date.now() + 60_000 }, `${TEST_SECRET}x`),
    ]) {
      await expectInvalid(check('login', code, forged), FORGED);
    }
    expect((await check('login', code, cookie)).data).toEqual({ value: true });
  });

  test('a body that breaks the contract is a 400 naming the field', async () => {
    const { cookie } = await fetchCaptcha();
    for (const body of [{}, { captcha: '' }, { captcha: 'x'.repeat(17) }, { captcha: 'K7PQ', extra: 1 }]) {
      const response = await supertest(app.app)
        .post('/api/v1/captcha/login/actions/check')
        .set('Cookie', `ss-captcha=${cookie}`)
        .send(body);
      expect(response.status).toBe(400);
      expect(response.body.type).toBe(`${PROBLEM_TYPE_BASE}validation`);
      expect(response.body.errors).toEqual([
        expect.objectContaining({ path: expect.stringMatching(/^\/body/) }),
      ]);
    }
  });

  test('neither a code nor a cookie reaches the logs', async () => {
    const { cookie, code } = await fetchCaptcha();
    await check('login', code, cookie);
    const logs = harness.logs();
    expect(logs).toContain('/api/v1/captcha/login/actions/check');
    expect(logs).not.toContain(cookie);
    expect(logs).not.toContain(cookie.split('.')[2]);
    expect(logs.toUpperCase()).not.toMatch(new RegExp(`\\b${code}\\b`));
  });
});

describe('limits and outages', () => {
  test(`more than ${CAPTCHA_CHECKS_PER_MINUTE} checks a minute from one address: 429 with Retry-After`, async () => {
    const limited = await startTestApp({ ...(redis && { redis }) });
    try {
      const send = () =>
        supertest(limited.app).post('/api/v1/captcha/login/actions/check').send({ captcha: 'K7PQ' });
      for (let n = 0; n < CAPTCHA_CHECKS_PER_MINUTE; n++) {
        const response = await send();
        expect(response.status).toBe(400);
        expect(response.body.type).toBe(INVALID);
      }
      const response = await send();
      expect(response.status).toBe(429);
      expect(response.body).toMatchObject({
        type: `${PROBLEM_TYPE_BASE}rate-limited`,
        status: 429,
        detail: expect.stringMatching(
          /^Too many captcha checks: at most 10 a minute per address; retry in \d+ s$/,
        ),
      });
      const retryAfter = Number(response.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The counter is the shared state's, under the client's address.
      const counter = await limited.state.get('captcha-check:address:127.0.0.1');
      expect(counter?.count).toBe(CAPTCHA_CHECKS_PER_MINUTE + 1);
    } finally {
      await limited.close();
    }
  });

  test('when the used-captcha record cannot be reached, a check is a 503, never a second use', async () => {
    const check503 = createCheckCaptcha();
    const down = await startTestApp({
      ...(redis && { redis }),
      handlers: {
        ...harness.handlers,
        checkCaptcha: (input, context) =>
          check503(input, {
            ...context,
            state: { ...context.state, mark: () => Promise.reject(new SharedStateUnavailable()) },
          }),
      },
    });
    try {
      const image = await supertest(down.app).get('/api/v1/captcha/login');
      const response = await supertest(down.app)
        .post('/api/v1/captcha/login/actions/check')
        .set('Cookie', `ss-captcha=${captchaCookieOf(image.headers['set-cookie'])}`)
        .send({ captcha: harness.lastCode() });
      expect(response.status).toBe(503);
      expect(response.body.type).toBe(`${PROBLEM_TYPE_BASE}service-unavailable`);
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await down.close();
    }
  });
});
