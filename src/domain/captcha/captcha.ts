import type { SharedState } from '../../state/port.ts';
import { DomainError, RateLimited, secondsUntil } from '../errors.ts';
import { newCaptchaCode } from './code.ts';
import { type RandomSource, renderCaptcha } from './image.ts';
import { answerMatches, signCaptchaToken, verifyCaptchaToken } from './token.ts';

/*
 * Captchas without server-side sessions: the image's code travels to the client only as pixels and,
 * inside a signed cookie, as a keyed hash (./token.ts). A check verifies the cookie, then takes the
 * captcha's single-use mark in the shared state (Redis or the database) — so a second check of the
 * same image fails on every node, right answer or wrong — and only then compares the answer. The
 * mark fails closed: when the store does not answer, the check is a 503, never a second use.
 * The code is a secret until it has been checked: it is never logged, stored or answered.
 */

export const CAPTCHA_LIFETIME_MS = 10 * 60_000;
/** Checks per client address per minute. */
export const CAPTCHA_CHECKS_PER_MINUTE = 10;
const CHECK_WINDOW_MS = 60_000;
/** The used mark outlives the captcha by this much, for nodes whose clocks run a little behind. */
const MARK_MARGIN_MS = 60_000;

/**
 * What tests may replace: the clock, the code (so that a test can answer it; production never
 * exposes a code), the randomness of the drawing and the limit per address.
 */
export interface CaptchaOptions {
  now?: () => number;
  newCode?: () => string;
  random?: RandomSource;
  checksPerMinute?: number;
}

export interface IssuedCaptcha {
  /** The PNG file. */
  image: Uint8Array;
  /** The signed cookie value. */
  token: string;
  lifetimeSeconds: number;
}

export function issueCaptcha(name: string, secret: string, options: CaptchaOptions = {}): IssuedCaptcha {
  const now = options.now?.() ?? Date.now();
  const code = (options.newCode ?? newCaptchaCode)();
  return {
    image: renderCaptcha(code, options.random),
    token: signCaptchaToken({ name, code, expiresAt: now + CAPTCHA_LIFETIME_MS }, secret),
    lifetimeSeconds: CAPTCHA_LIFETIME_MS / 1000,
  };
}

const invalidCaptcha = (message: string) => new DomainError('captcha-invalid', message);

export interface CaptchaCheck {
  name: string;
  answer: string;
  /** The cookie's value, when the client sent one. */
  token: string | undefined;
  /** Who is checking, for the limit per address. */
  address: string;
}

/** Resolves when the answer is right; throws captcha-invalid (400) or rate-limited (429) otherwise. */
export async function checkCaptchaAnswer(
  { name, answer, token, address }: CaptchaCheck,
  { secret, state, options = {} }: { secret: string; state: SharedState; options?: CaptchaOptions },
): Promise<void> {
  const limit = options.checksPerMinute ?? CAPTCHA_CHECKS_PER_MINUTE;
  const counter = await state.increment(`captcha-check:address:${address}`, CHECK_WINDOW_MS);
  const now = options.now?.() ?? Date.now();
  if (counter.count > limit) {
    const retryAfter = secondsUntil(counter.resetAt, now);
    throw new RateLimited(
      `Too many captcha checks: at most ${limit} a minute per address; retry in ${retryAfter} s`,
      retryAfter,
    );
  }
  if (token === undefined) {
    throw invalidCaptcha('No captcha to check (the ss-captcha cookie is missing); fetch an image first');
  }
  const claims = verifyCaptchaToken(token, secret);
  if (claims === undefined) throw invalidCaptcha('The ss-captcha cookie is not valid; fetch a new image');
  if (claims.name !== name) {
    throw invalidCaptcha('The ss-captcha cookie belongs to another captcha; fetch a new image');
  }
  if (claims.exp <= now) throw invalidCaptcha('This captcha has expired; fetch a new image');
  if (!(await state.mark(`captcha:${claims.id}`, claims.exp - now + MARK_MARGIN_MS))) {
    throw invalidCaptcha('This captcha has already been checked; fetch a new image');
  }
  if (!answerMatches(claims, answer, secret)) {
    throw invalidCaptcha('The captcha answer is wrong; fetch a new image');
  }
}
