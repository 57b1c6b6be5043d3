import { tokenSecretOf } from '../../config.ts';
import { type CaptchaOptions, checkCaptchaAnswer } from '../../domain/captcha/captcha.ts';
import type { Handler } from '../types.ts';

/** Options are for tests (a clock, a limit); the registry mounts the default. */
export function createCheckCaptcha(options: CaptchaOptions = {}): Handler<'checkCaptcha'> {
  return async ({ path, cookie, body }, { config, state, clientAddress }) => {
    await checkCaptchaAnswer(
      { name: path.name, answer: body.captcha, token: cookie['ss-captcha'], address: clientAddress },
      { secret: tokenSecretOf(config), state, options },
    );
    return { value: true };
  };
}

export const checkCaptcha = createCheckCaptcha();
