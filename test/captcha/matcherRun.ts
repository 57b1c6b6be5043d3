import { CODE_LENGTH } from '../../src/domain/captcha/code.ts';
import { CODE_ALPHABET } from '../../src/domain/captcha/glyphs.ts';
import { renderCaptcha } from '../../src/domain/captcha/image.ts';
import { seeded } from './seeded.ts';
import { solidGlyphImage } from './solidGlyphs.ts';
import { readAll } from './templateMatcher.ts';

/*
 * Draws `count` images from a seeded source and reads each with every strategy of the template
 * matcher; prints how many each strategy read, and how many any strategy read, as JSON.
 * Run by test/captcha/templateMatcher.test.ts in a process of its own: inside Jest's module
 * sandbox the matcher's arithmetic runs several times slower.
 *
 *   node --import tsx test/captcha/matcherRun.ts <captcha|solid> <seed> <count>
 */

const [kind, seed, count] = process.argv.slice(2);
const random = seeded(Number(seed));
const draw = kind === 'solid' ? solidGlyphImage : renderCaptcha;
const counts: Record<string, number> = {};
let readByAny = 0;
for (let n = 0; n < Number(count); n++) {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[Math.floor(random() * CODE_ALPHABET.length)];
  const readings = readAll(draw(code, random));
  for (const [strategy, reading] of readings)
    counts[strategy] = (counts[strategy] ?? 0) + (reading === code ? 1 : 0);
  if ([...readings.values()].includes(code)) readByAny++;
}
process.stdout.write(JSON.stringify({ counts, readByAny }));
