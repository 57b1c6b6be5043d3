import { tokenSecretOf } from '../../config.ts';
import { type CaptchaOptions, issueCaptcha } from '../../domain/captcha/captcha.ts';
import type { Handler } from '../types.ts';

export const CAPTCHA_COOKIE = 'ss-captcha';
/** The cookie goes back only to the captcha operations. */
const COOKIE_PATH = '/api/v1/captcha';

/** Options are for tests (a known code, a clock); the registry mounts the default. */
export function createGetCaptcha(options: CaptchaOptions = {}): Handler<'getCaptcha'> {
  return async ({ path }, { config, reply }) => {
    const { image, token, lifetimeSeconds } = issueCaptcha(path.name, tokenSecretOf(config), options);
    return reply({
      status: 200,
      mediaType: 'image/png',
      body: image,
      headers: { 'Cache-Control': 'no-store' },
      cookies: [
        {
          name: CAPTCHA_COOKIE,
          value: token,
          maxAge: lifetimeSeconds,
          path: COOKIE_PATH,
          httpOnly: true,
          sameSite: 'lax',
        },
      ],
    });
  };
}

export const getCaptcha = createGetCaptcha();
