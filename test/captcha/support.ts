import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { connectRedis } from '../../src/db/redis.ts';
import type { CaptchaOptions } from '../../src/domain/captcha/captcha.ts';
import { newCaptchaCode } from '../../src/domain/captcha/code.ts';
import { createCheckCaptcha } from '../../src/operations/captcha/checkCaptcha.ts';
import { createGetCaptcha } from '../../src/operations/captcha/getCaptcha.ts';
import type { Registry } from '../../src/operations/registry.ts';
import { handlers } from '../../src/operations/registry.ts';
import { leaks } from '../support/leaks.ts';

/*
 * What the captcha tests share: the captcha handlers of production, built with a clock the test
 * moves and a code generator that tells the test each code it drew (production never exposes one),
 * a logger whose lines the test reads, and Redis when TEST_REDIS_URL is set.
 */

export interface CaptchaHarness {
  handlers: Registry;
  /** The code of the last image drawn. */
  lastCode(): string;
  /** Moves the handlers' clock. */
  advance(ms: number): void;
  /** Every log line written so far. */
  logs(): string;
  logger: Logger;
}

export function captchaHarness(options: Pick<CaptchaOptions, 'checksPerMinute'> = {}): CaptchaHarness {
  let offset = 0;
  let last: string | undefined;
  const captchaOptions: CaptchaOptions = {
    ...options,
    now: () => Date.now() + offset,
    newCode: () => {
      last = newCaptchaCode();
      leaks.secret(last, 'captcha code drawn', 'word');
      return last;
    },
  };
  const lines: string[] = [];
  const logger = pino(
    { level: 'trace' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  return {
    handlers: {
      ...handlers,
      getCaptcha: createGetCaptcha(captchaOptions),
      checkCaptcha: createCheckCaptcha(captchaOptions),
    },
    lastCode() {
      if (last === undefined) throw new Error('no captcha drawn yet');
      return last;
    },
    advance(ms) {
      offset += ms;
    },
    logs: () => lines.join(''),
    logger,
  };
}

/**
 * A Redis client for the run's TEST_REDIS_URL, connected (a first command that has to connect on a
 * busy machine may time out, and the fail policy would then rest the store), or undefined: the
 * shared state is then the database.
 */
export async function testRedis(): Promise<Redis | undefined> {
  const url = process.env.TEST_REDIS_URL;
  return url ? connectRedis(url) : undefined;
}

/** The `ss-captcha` cookie's value from a response's Set-Cookie headers. */
export function captchaCookieOf(setCookie: string | string[] | undefined): string {
  const header = [setCookie ?? []].flat().find((line) => line.startsWith('ss-captcha='));
  const value = header?.split(';')[0]?.slice('ss-captcha='.length);
  if (!value) throw new Error(`no ss-captcha cookie in ${JSON.stringify(setCookie)}`);
  return value;
}
