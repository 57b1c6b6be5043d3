import { PNG } from 'pngjs';
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyphCell } from '../../src/domain/captcha/glyphs.ts';
import { CAPTCHA_HEIGHT, CAPTCHA_WIDTH } from '../../src/domain/captcha/image.ts';

/**
 * The class of image the review read 20 of 20 of: the font's cells as 4-pixel blocks, each glyph
 * in one solid dark colour, sheared and shifted a little, with dark specks on a grey background.
 */
export function solidGlyphImage(code: string, random: () => number): Uint8Array {
  const png = new PNG({ width: CAPTCHA_WIDTH, height: CAPTCHA_HEIGHT });
  for (let at = 0; at < png.data.length; at += 4) {
    const shade = 225 + Math.round(random() * 20);
    png.data.set([shade, shade, shade + 5, 255], at);
  }
  const paint = (x: number, y: number, colour: number[]) => {
    const px = Math.round(x);
    const py = Math.round(y);
    if (px >= 0 && py >= 0 && px < CAPTCHA_WIDTH && py < CAPTCHA_HEIGHT)
      png.data.set([...colour, 255], (py * CAPTCHA_WIDTH + px) * 4);
  };
  [...code].forEach((character, index) => {
    const colour = [0, 0, 0].map(() => Math.round(random() * 110));
    const shear = (random() - 0.5) * 0.7;
    const left = 8 + index * 26 + (random() - 0.5) * 4;
    const top = 6 + (random() - 0.5) * 8;
    for (let gy = 0; gy < GLYPH_HEIGHT; gy++)
      for (let gx = 0; gx < GLYPH_WIDTH; gx++)
        if (glyphCell(character, gx, gy))
          for (let dy = 0; dy < 4; dy++)
            for (let dx = 0; dx < 4; dx++)
              paint(left + gx * 4 + dx + shear * (gy * 4 + dy - 14), top + gy * 4 + dy, colour);
  });
  for (let n = 0; n < 120; n++)
    paint(
      random() * CAPTCHA_WIDTH,
      random() * CAPTCHA_HEIGHT,
      [0, 0, 0].map(() => Math.round(random() * 110)),
    );
  return PNG.sync.write(png);
}
