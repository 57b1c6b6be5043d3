import { randomInt } from 'node:crypto';
import { CODE_ALPHABET } from './glyphs.ts';

/** Characters in a code: 31^4 ≈ 920,000 codes, against one guess per image and 10 checks a minute. */
export const CODE_LENGTH = 4;

/** A fresh code from the system's CSPRNG. */
export function newCaptchaCode(): string {
  let code = '';
  for (let n = 0; n < CODE_LENGTH; n++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** How an answer is compared: case and surrounding spaces do not matter. */
export function normaliseAnswer(answer: string): string {
  return answer.trim().toUpperCase();
}
