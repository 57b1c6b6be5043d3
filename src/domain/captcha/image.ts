import { randomBytes } from 'node:crypto';
import { PNG } from 'pngjs';
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyphCell } from './glyphs.ts';

/*
 * Draws a code as a small PNG that a person reads and a template matcher does not
 * (docs/security/urls-and-captcha.md). The project's 5×7 font (./glyphs.ts) is only a skeleton:
 * each glyph is drawn as strokes joining its cells' centres, of a random thickness, turned,
 * scaled and sheared on its own; the glyphs overlap their neighbours; the whole text is bent by a
 * smooth random warp; the ink's colour is a gradient across the text with noise in every pixel
 * (no glyph has a colour of its own), with gaps in the strokes and dark specks around them; and
 * curves of the ink's thickness and colours cross the text. pngjs only encodes the pixels (pure
 * JavaScript, no native code): the registry's captcha packages draw SVG or GIF, or need a native
 * canvas that downloads a binary at install.
 */

export const CAPTCHA_WIDTH = 120;
export const CAPTCHA_HEIGHT = 40;

/** Pixels per font cell before the glyph's own scaling. */
const CELL_PX = 4;
/** Horizontal distance between glyph origins: a little less than a glyph is wide, so glyphs touch. */
const ADVANCE = { low: 19, high: 23 };
const MAX_TURN = 0.2;
const MAX_SHEAR = 0.25;
const CROSSING_CURVES = 2;

/** A source of numbers in [0, 1). */
export type RandomSource = () => number;

/**
 * A fast generator (sfc32) seeded with 128 bits from the system's CSPRNG: every image draws
 * tens of thousands of numbers (noise in each pixel), too many to ask the CSPRNG for each, and
 * none of them can be predicted without the seed.
 */
export function secureRandomSource(): RandomSource {
  const seed = randomBytes(16);
  let a = seed.readUInt32LE(0);
  let b = seed.readUInt32LE(4);
  let c = seed.readUInt32LE(8);
  let d = seed.readUInt32LE(12);
  return () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 0x1_0000_0000;
  };
}

type Rgb = readonly [number, number, number];
type Segment = readonly [x0: number, y0: number, x1: number, y1: number];

function between(random: RandomSource, low: number, high: number): number {
  return low + (high - low) * random();
}

// A memo of each glyph's strokes, derived from the font alone: never changed once made.
const SEGMENTS = new Map<string, Segment[]>();

/**
 * The glyph as strokes in font-cell units: a segment between the centres of every two drawn cells
 * that touch side by side, and diagonally where no side cell already joins them; a lone cell is a dot.
 */
function strokesOf(character: string): Segment[] {
  const known = SEGMENTS.get(character);
  if (known) return known;
  const drawn = (x: number, y: number) =>
    x >= 0 && y >= 0 && x < GLYPH_WIDTH && y < GLYPH_HEIGHT && glyphCell(character, x, y);
  const segments: Segment[] = [];
  for (let y = 0; y < GLYPH_HEIGHT; y++) {
    for (let x = 0; x < GLYPH_WIDTH; x++) {
      if (!drawn(x, y)) continue;
      const joined: Segment[] = [];
      if (drawn(x + 1, y)) joined.push([x, y, x + 1, y]);
      if (drawn(x, y + 1)) joined.push([x, y, x, y + 1]);
      if (drawn(x + 1, y + 1) && !drawn(x + 1, y) && !drawn(x, y + 1)) joined.push([x, y, x + 1, y + 1]);
      if (drawn(x - 1, y + 1) && !drawn(x - 1, y) && !drawn(x, y + 1)) joined.push([x, y, x - 1, y + 1]);
      const alone = !drawn(x - 1, y) && !drawn(x, y - 1) && !drawn(x - 1, y - 1) && !drawn(x + 1, y - 1);
      if (joined.length === 0 && alone) joined.push([x, y, x, y]);
      segments.push(...joined.map(([a, b, c, d]) => [a + 0.5, b + 0.5, c + 0.5, d + 0.5] as const));
    }
  }
  SEGMENTS.set(character, segments);
  return segments;
}

function distanceToSegment(px: number, py: number, [x0, y0, x1, y1]: Segment): number {
  const dx = x1 - x0;
  const dy = y1 - y0;
  const length = dx * dx + dy * dy;
  const t = length === 0 ? 0 : Math.max(0, Math.min(1, ((px - x0) * dx + (py - y0) * dy) / length));
  return Math.hypot(px - x0 - t * dx, py - y0 - t * dy);
}

/** How far (in cells) each of the font's cell centres may move in one drawing of a glyph. */
const NODE_JITTER = 0.12;
/** How far (in cells) a glyph's middle may move against its outline. */
const PROPORTION = 0.6;

/**
 * The glyph's strokes with every cell centre moved at random: no two drawings of a character
 * have the same shape, though each keeps its strokes and how they join. Draws the same count of
 * numbers for every character.
 */
function jittered(segments: Segment[], random: RandomSource): Segment[] {
  const moves = Array.from({ length: (GLYPH_WIDTH + 1) * (GLYPH_HEIGHT + 1) * 2 }, () =>
    between(random, -NODE_JITTER, NODE_JITTER),
  );
  // The glyph's proportions change too: its middle moves up or down, left or right (where an A's
  // or an H's bar sits, how wide a B's bowls are), its outline stays.
  const stretchX = between(random, -PROPORTION, PROPORTION);
  const stretchY = between(random, -PROPORTION * 1.2, PROPORTION * 1.2);
  const moved = (x: number, y: number): [number, number] => {
    const node = (Math.floor(y) * (GLYPH_WIDTH + 1) + Math.floor(x)) * 2;
    return [
      x + stretchX * Math.sin((Math.PI * x) / GLYPH_WIDTH) + (moves[node] ?? 0),
      y + stretchY * Math.sin((Math.PI * y) / GLYPH_HEIGHT) + (moves[node + 1] ?? 0),
    ];
  };
  return segments.map(([x0, y0, x1, y1]) => [...moved(x0, y0), ...moved(x1, y1)] as const);
}

/** One glyph placed on the picture: pixel → font-cell coordinates, and its stroke half-width. */
interface PlacedGlyph {
  segments: Segment[];
  centreX: number;
  centreY: number;
  /** Inverse of turn × scale × shear, row-major 2×2. */
  inverse: readonly [number, number, number, number];
  halfWidth: number;
}

function placeGlyph(character: string, centreX: number, random: RandomSource): PlacedGlyph {
  const turn = between(random, -MAX_TURN, MAX_TURN);
  const shear = between(random, -MAX_SHEAR, MAX_SHEAR);
  const scaleX = CELL_PX * between(random, 0.8, 1.15);
  const scaleY = CELL_PX * between(random, 0.85, 1.05);
  const centreY = CAPTCHA_HEIGHT / 2 + between(random, -3, 3);
  // Forward: [cos -sin; sin cos] · [1 shear; 0 1] · diag(scaleX, scaleY).
  const cos = Math.cos(turn);
  const sin = Math.sin(turn);
  const a = cos * scaleX;
  const b = (cos * shear - sin) * scaleY;
  const c = sin * scaleX;
  const d = (sin * shear + cos) * scaleY;
  const determinant = a * d - b * c;
  return {
    segments: jittered(strokesOf(character), random),
    centreX,
    centreY,
    inverse: [d / determinant, -b / determinant, -c / determinant, a / determinant],
    halfWidth: between(random, 0.3, 0.42),
  };
}

/** How much of a pixel the glyph's ink covers (0 to 1), with a one-pixel soft edge. */
function coverage(glyph: PlacedGlyph, x: number, y: number): number {
  const dx = x - glyph.centreX;
  const dy = y - glyph.centreY;
  const [ia, ib, ic, id] = glyph.inverse;
  const u = ia * dx + ib * dy + GLYPH_WIDTH / 2;
  const v = ic * dx + id * dy + GLYPH_HEIGHT / 2;
  if (u < -1 || v < -1 || u > GLYPH_WIDTH + 1 || v > GLYPH_HEIGHT + 1) return 0;
  let nearest = Number.POSITIVE_INFINITY;
  for (const segment of glyph.segments) nearest = Math.min(nearest, distanceToSegment(u, v, segment));
  // The soft edge is one pixel wide: convert the distance in cells back to pixels.
  const outside = (nearest - glyph.halfWidth) * CELL_PX;
  return Math.max(0, Math.min(1, 0.5 - outside));
}

/** A smooth random displacement: a sum of two waves each way, a couple of pixels high. */
function warp(random: RandomSource): (x: number, y: number) => [number, number] {
  const wave = () => ({
    amplitude: between(random, 0.7, 1.3),
    kx: between(random, 0.12, 0.25) * (random() < 0.5 ? -1 : 1),
    ky: between(random, 0.12, 0.25) * (random() < 0.5 ? -1 : 1),
    phase: between(random, 0, 2 * Math.PI),
  });
  const waves = [wave(), wave(), wave(), wave()];
  const at = (w: ReturnType<typeof wave>, x: number, y: number) =>
    w.amplitude * Math.sin(w.kx * x + w.ky * y + w.phase);
  return (x, y) => {
    const [w0, w1, w2, w3] = waves as [
      (typeof waves)[0],
      (typeof waves)[0],
      (typeof waves)[0],
      (typeof waves)[0],
    ];
    return [x + at(w0, x, y) + at(w1, x, y), y + at(w2, x, y) + at(w3, x, y)];
  };
}

function darkColor(random: RandomSource): Rgb {
  return [between(random, 0, 100), between(random, 0, 100), between(random, 0, 100)];
}

/** The ink's colour at a point: a gradient between two dark colours along a random direction. */
function inkGradient(random: RandomSource): (x: number, y: number) => Rgb {
  const from = darkColor(random);
  const to = darkColor(random);
  const angle = between(random, 0, 2 * Math.PI);
  const ux = Math.cos(angle) / CAPTCHA_WIDTH;
  const uy = Math.sin(angle) / CAPTCHA_HEIGHT;
  return (x, y) => {
    const t = Math.max(0, Math.min(1, 0.5 + (x - CAPTCHA_WIDTH / 2) * ux + (y - CAPTCHA_HEIGHT / 2) * uy));
    return [
      from[0] + (to[0] - from[0]) * t,
      from[1] + (to[1] - from[1]) * t,
      from[2] + (to[2] - from[2]) * t,
    ];
  };
}

/** A curve across the text, of the strokes' thickness: its distance (in pixels) from a point. */
function crossingCurve(random: RandomSource): (x: number, y: number) => number {
  const middle = between(random, 12, CAPTCHA_HEIGHT - 12);
  const slope = between(random, -0.15, 0.15);
  const amplitude = between(random, 2, 6);
  const k = between(random, 0.04, 0.1);
  const phase = between(random, 0, 2 * Math.PI);
  const halfWidth = between(random, 0.45, 0.8);
  return (x, y) => {
    const curveY = middle + slope * (x - CAPTCHA_WIDTH / 2) + amplitude * Math.sin(k * x + phase);
    const gradient = slope + amplitude * k * Math.cos(k * x + phase);
    return Math.abs(y - curveY) / Math.sqrt(1 + gradient * gradient) - halfWidth;
  };
}

const clamp = (value: number) => Math.max(0, Math.min(255, Math.round(value)));

/**
 * The PNG file (bytes) showing `code`; any character outside the font is a programming error.
 * Every image draws the same count of random numbers whatever its code, so that, with the same
 * source, two codes differing in one character differ only around that glyph.
 */
export function renderCaptcha(code: string, random: RandomSource = secureRandomSource()): Uint8Array {
  const png = new PNG({ width: CAPTCHA_WIDTH, height: CAPTCHA_HEIGHT });
  const characters = [...code];
  const advances = characters.map(() => between(random, ADVANCE.low, ADVANCE.high));
  const textWidth = advances.reduce((sum, advance) => sum + advance, 0);
  let left = (CAPTCHA_WIDTH - textWidth) / 2 + between(random, -4, 4);
  const glyphs = characters.map((character, index) => {
    const advance = advances[index] ?? ADVANCE.low;
    const glyph = placeGlyph(character, left + advance / 2, random);
    left += advance;
    return glyph;
  });
  const bend = warp(random);
  const ink = inkGradient(random);
  const curves = Array.from({ length: CROSSING_CURVES }, () => crossingCurve(random));
  const paper = between(random, 225, 245);
  const tint: Rgb = [between(random, -10, 10), between(random, -10, 10), between(random, -10, 10)];

  for (let y = 0; y < CAPTCHA_HEIGHT; y++) {
    for (let x = 0; x < CAPTCHA_WIDTH; x++) {
      const [wx, wy] = bend(x + 0.5, y + 0.5);
      let covered = 0;
      for (const glyph of glyphs) {
        if (Math.abs(wx - glyph.centreX) > 20) continue;
        covered = Math.max(covered, coverage(glyph, wx, wy));
      }
      for (const curve of curves)
        covered = Math.max(covered, Math.max(0, Math.min(1, 0.5 - curve(x + 0.5, y + 0.5))));
      // Noise the same in every image: gaps in the strokes, specks on the paper, grain everywhere.
      const gap = random() < 0.07;
      const speck = random() < 0.015;
      const grain = [between(random, -35, 35), between(random, -35, 35), between(random, -35, 35)];
      const shade = paper + between(random, -14, 6);
      const [r, g, b] = ink(x, y);
      const amount = gap ? covered * 0.35 : speck ? Math.max(covered, 0.8) : covered;
      const at = (y * CAPTCHA_WIDTH + x) * 4;
      png.data[at] = clamp(shade + tint[0] + (r + (grain[0] ?? 0) - shade - tint[0]) * amount);
      png.data[at + 1] = clamp(shade + tint[1] + (g + (grain[1] ?? 0) - shade - tint[1]) * amount);
      png.data[at + 2] = clamp(shade + tint[2] + (b + (grain[2] ?? 0) - shade - tint[2]) * amount);
      png.data[at + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}
