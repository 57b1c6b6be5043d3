import { randomInt } from 'node:crypto';
import { PNG } from 'pngjs';
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyphCell } from './glyphs.ts';

/*
 * Draws a code as a small PNG that a person reads easily and a naive OCR does not: each glyph of
 * the project's own bitmap font (./glyphs.ts) is scaled, sheared, shifted and coloured at random,
 * on a speckled background crossed by lines of the glyphs' own darkness. pngjs only encodes the
 * pixels (pure JavaScript, no native code). The registry's captcha packages draw SVG or GIF, or
 * need a native canvas that downloads a binary at install, hence this small renderer.
 */

export const CAPTCHA_WIDTH = 120;
export const CAPTCHA_HEIGHT = 40;

const SCALE = 4;
const CELL = 26;
const MARGIN = 8;
const MAX_SHEAR = 0.35;

/** A source of numbers in [0, 1); the default draws them from the system's CSPRNG. */
export type RandomSource = () => number;

const secureRandom: RandomSource = () => randomInt(0, 0x1_0000_0000) / 0x1_0000_0000;

type Rgb = readonly [number, number, number];

class Canvas {
  readonly png = new PNG({ width: CAPTCHA_WIDTH, height: CAPTCHA_HEIGHT });

  set(x: number, y: number, [r, g, b]: Rgb): void {
    const px = Math.round(x);
    const py = Math.round(y);
    if (px < 0 || py < 0 || px >= CAPTCHA_WIDTH || py >= CAPTCHA_HEIGHT) return;
    const at = (py * CAPTCHA_WIDTH + px) * 4;
    this.png.data[at] = r;
    this.png.data[at + 1] = g;
    this.png.data[at + 2] = b;
    this.png.data[at + 3] = 255;
  }

  line(x0: number, y0: number, x1: number, y1: number, color: Rgb): void {
    const steps = Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0), 1);
    for (let step = 0; step <= steps; step++) {
      const t = step / steps;
      this.set(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, color);
    }
  }
}

function between(random: RandomSource, low: number, high: number): number {
  return low + (high - low) * random();
}

function darkColor(random: RandomSource): Rgb {
  return [between(random, 0, 110), between(random, 0, 110), between(random, 0, 110)].map(Math.round) as [
    number,
    number,
    number,
  ];
}

/** The PNG file (bytes) showing `code`; any character outside the font is a programming error. */
export function renderCaptcha(code: string, random: RandomSource = secureRandom): Uint8Array {
  const canvas = new Canvas();
  const base = Math.round(between(random, 225, 250));
  for (let y = 0; y < CAPTCHA_HEIGHT; y++) {
    for (let x = 0; x < CAPTCHA_WIDTH; x++) {
      const shade = Math.min(250, base + Math.round(between(random, -18, 5)));
      canvas.set(x, y, [shade, shade, shade + 5]);
    }
  }
  const glyphHeight = GLYPH_HEIGHT * SCALE;
  [...code].forEach((character, index) => {
    const color = darkColor(random);
    const shear = between(random, -MAX_SHEAR, MAX_SHEAR);
    const left = MARGIN + index * CELL + between(random, -2, 2);
    const top = (CAPTCHA_HEIGHT - glyphHeight) / 2 + between(random, -4, 4);
    for (let gy = 0; gy < GLYPH_HEIGHT; gy++) {
      for (let gx = 0; gx < GLYPH_WIDTH; gx++) {
        if (!glyphCell(character, gx, gy)) continue;
        for (let dy = 0; dy < SCALE; dy++) {
          const row = gy * SCALE + dy;
          const slant = shear * (row - glyphHeight / 2);
          for (let dx = 0; dx < SCALE; dx++) canvas.set(left + gx * SCALE + dx + slant, top + row, color);
        }
      }
    }
  });
  for (let n = 0; n < 3; n++) {
    canvas.line(
      between(random, 0, CAPTCHA_WIDTH / 3),
      between(random, 0, CAPTCHA_HEIGHT),
      between(random, (2 * CAPTCHA_WIDTH) / 3, CAPTCHA_WIDTH),
      between(random, 0, CAPTCHA_HEIGHT),
      darkColor(random),
    );
  }
  for (let n = 0; n < 120; n++) {
    canvas.set(between(random, 0, CAPTCHA_WIDTH), between(random, 0, CAPTCHA_HEIGHT), darkColor(random));
  }
  return PNG.sync.write(canvas.png);
}
