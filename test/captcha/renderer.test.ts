import { describe, expect, test } from '@jest/globals';
import { PNG } from 'pngjs';
import { newCaptchaCode, normaliseAnswer } from '../../src/domain/captcha/code.ts';
import { CODE_ALPHABET, GLYPH_HEIGHT, GLYPH_WIDTH, glyphCell } from '../../src/domain/captcha/glyphs.ts';
import { renderCaptcha } from '../../src/domain/captcha/image.ts';
import { seeded } from './seeded.ts';

/* The code, the font and the drawing, without HTTP. */

function bitmap(character: string): string {
  let cells = '';
  for (let y = 0; y < GLYPH_HEIGHT; y++) {
    for (let x = 0; x < GLYPH_WIDTH; x++) cells += glyphCell(character, x, y) ? '#' : '.';
  }
  return cells;
}

describe('codes and font', () => {
  test('the alphabet leaves out the characters people confuse, and every glyph is its own', () => {
    expect(CODE_ALPHABET).toBe('ABCDEFGHJKMNPQRSTUVWXYZ23456789');
    const bitmaps = [...CODE_ALPHABET].map(bitmap);
    expect(new Set(bitmaps).size).toBe(CODE_ALPHABET.length);
    for (const cells of bitmaps) expect(cells.replace(/\./g, '').length).toBeGreaterThanOrEqual(9);
    expect(() => bitmap('O')).toThrow('No glyph for "O"');
  });

  test('codes are 4 characters of the alphabet, drawn at random', () => {
    const codes = Array.from({ length: 200 }, newCaptchaCode);
    for (const code of codes) expect(code).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ2-9]{4}$/);
    expect(new Set(codes).size).toBeGreaterThan(190);
    expect(new Set(codes.join('')).size).toBe(CODE_ALPHABET.length);
  });

  test('answers are compared without case or surrounding spaces', () => {
    expect(normaliseAnswer('\tk7pQ\n')).toBe('K7PQ');
    expect(normaliseAnswer(' k7pq ')).toBe('K7PQ');
  });
});

describe('drawing', () => {
  test('the same randomness draws the same image; another code draws another one', () => {
    const first = renderCaptcha('K7PQ', seeded(42));
    expect(Buffer.from(renderCaptcha('K7PQ', seeded(42)))).toEqual(Buffer.from(first));
    const other = PNG.sync.read(Buffer.from(renderCaptcha('K7PR', seeded(42))));
    const same = PNG.sync.read(Buffer.from(first));
    let differing = 0;
    for (let at = 0; at < same.data.length; at += 4) if (same.data[at] !== other.data[at]) differing++;
    // Only the last glyph differs (Q against R): some pixels, not the whole picture.
    expect(differing).toBeGreaterThan(10);
    expect(differing).toBeLessThan(120 * 40 * 0.2);
  });

  test('the glyphs are drawn dark on a light background, across the width', () => {
    const image = PNG.sync.read(Buffer.from(renderCaptcha('WWWW', seeded(7))));
    const darkColumns = new Set<number>();
    for (let y = 0; y < image.height; y++) {
      for (let x = 0; x < image.width; x++) {
        const at = (y * image.width + x) * 4;
        if ((image.data[at] ?? 255) < 120 && (image.data[at + 1] ?? 255) < 120) darkColumns.add(x);
      }
    }
    // Four W glyphs of 20 px each cover most columns from the margin to the last cell.
    expect([...darkColumns].filter((x) => x >= 8 && x < 104).length).toBeGreaterThan(60);
    expect(image.data[3]).toBe(255);
  });
});
