import { PNG } from 'pngjs';
import { CODE_LENGTH } from '../../src/domain/captcha/code.ts';
import { CODE_ALPHABET, GLYPH_HEIGHT, GLYPH_WIDTH, glyphCell } from '../../src/domain/captcha/glyphs.ts';

/*
 * An attacker's template matcher, written to read the captcha as well as that class of attack can
 * (issue 15 §6): templates are built from the service's own font; the image is cut into glyphs by
 * colour and by columns; each glyph is compared with every template, deskewed over a range of
 * shears, by normalised cross-correlation. Several preprocessing strategies are tried (thresholds
 * by colour distance from the background and by darkness, with and without removing speckles);
 * test/captcha/templateMatcher.test.ts reports each one's rate and holds the best under 5 %.
 */

type Mask = Uint8Array;

interface Picture {
  width: number;
  height: number;
  rgb: Float64Array;
  /** The background colour: the median of every pixel (most of the picture is background). */
  background: [number, number, number];
}

/** The sampling grid a glyph is compared on: the font's grid, two samples per cell each way. */
const GRID_X = GLYPH_WIDTH * 2;
const GRID_Y = GLYPH_HEIGHT * 2;
const SHEARS = [-0.45, -0.3, -0.15, 0, 0.15, 0.3, 0.45];

/** Each character's template on the sampling grid, centred and scaled to unit norm. */
const TEMPLATES: { character: string; cells: Float64Array }[] = [...CODE_ALPHABET].map((character) => {
  const cells = new Float64Array(GRID_X * GRID_Y);
  for (let y = 0; y < GRID_Y; y++)
    for (let x = 0; x < GRID_X; x++) cells[y * GRID_X + x] = glyphCell(character, x >> 1, y >> 1) ? 1 : 0;
  return { character, cells: normalised(cells) };
});

const CELLS = GRID_X * GRID_Y;
/** Every template's cells in one array, for speed. */
const TEMPLATE_CELLS = new Float64Array(TEMPLATES.length * CELLS);
TEMPLATES.forEach((template, t) => {
  TEMPLATE_CELLS.set(template.cells, t * CELLS);
});

function normalised(cells: Float64Array): Float64Array {
  let mean = 0;
  for (const value of cells) mean += value / cells.length;
  let norm = 0;
  const out = cells.map((value) => value - mean);
  for (const value of out) norm += value * value;
  const scale = norm === 0 ? 0 : 1 / Math.sqrt(norm);
  return out.map((value) => value * scale);
}

export function readPicture(png: Uint8Array): Picture {
  const image = PNG.sync.read(Buffer.from(png));
  const rgb = new Float64Array(image.width * image.height * 3);
  for (let i = 0; i < image.width * image.height; i++) {
    rgb[i * 3] = image.data[i * 4] ?? 0;
    rgb[i * 3 + 1] = image.data[i * 4 + 1] ?? 0;
    rgb[i * 3 + 2] = image.data[i * 4 + 2] ?? 0;
  }
  const channels: number[][] = [[], [], []];
  for (let i = 0; i < image.width * image.height; i++)
    for (let c = 0; c < 3; c++) channels[c]?.push(rgb[i * 3 + c] ?? 0);
  const background: [number, number, number] = [
    median(channels[0] ?? []),
    median(channels[1] ?? []),
    median(channels[2] ?? []),
  ];
  return { width: image.width, height: image.height, rgb, background };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] ?? 0;
}

const byColourDistance =
  (threshold: number) =>
  (picture: Picture): Mask => {
    const [r, g, b] = picture.background;
    const mask = new Uint8Array(picture.width * picture.height);
    for (let i = 0; i < mask.length; i++) {
      const dr = (picture.rgb[i * 3] ?? 0) - r;
      const dg = (picture.rgb[i * 3 + 1] ?? 0) - g;
      const db = (picture.rgb[i * 3 + 2] ?? 0) - b;
      mask[i] = Math.sqrt(dr * dr + dg * dg + db * db) > threshold ? 1 : 0;
    }
    return mask;
  };

const byDarkness =
  (threshold: number) =>
  (picture: Picture): Mask => {
    const mask = new Uint8Array(picture.width * picture.height);
    for (let i = 0; i < mask.length; i++) {
      const luminance =
        0.299 * (picture.rgb[i * 3] ?? 0) +
        0.587 * (picture.rgb[i * 3 + 1] ?? 0) +
        0.114 * (picture.rgb[i * 3 + 2] ?? 0);
      mask[i] = luminance < threshold ? 1 : 0;
    }
    return mask;
  };

/** Drops foreground pixels with fewer than `neighbours` foreground pixels around them (speckles, thin lines). */
const despeckled =
  (masker: (picture: Picture) => Mask, neighbours: number) =>
  (picture: Picture): Mask => {
    const mask = masker(picture);
    const { width, height } = picture;
    const out = new Uint8Array(mask.length);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        if (!mask[y * width + x]) continue;
        let count = 0;
        for (let dy = -1; dy <= 1; dy++)
          for (let dx = -1; dx <= 1; dx++) {
            const nx = x + dx;
            const ny = y + dy;
            if ((dx || dy) && nx >= 0 && ny >= 0 && nx < width && ny < height && mask[ny * width + nx])
              count++;
          }
        out[y * width + x] = count >= neighbours ? 1 : 0;
      }
    }
    return out;
  };

function columnCounts(picture: Picture, mask: Mask): number[] {
  const counts = new Array<number>(picture.width).fill(0);
  for (let y = 0; y < picture.height; y++)
    for (let x = 0; x < picture.width; x++) if (mask[y * picture.width + x]) counts[x] = (counts[x] ?? 0) + 1;
  return counts;
}

/** The columns holding the text: from the first to the last column with a few foreground pixels. */
function textExtent(counts: number[]): [number, number] {
  const busy = counts.flatMap((count, x) => (count >= 2 ? [x] : []));
  return [busy[0] ?? 0, (busy[busy.length - 1] ?? counts.length - 1) + 1];
}

function columnsMask(picture: Picture, mask: Mask, from: number, to: number): Mask {
  const out = new Uint8Array(mask.length);
  for (let y = 0; y < picture.height; y++)
    for (let x = Math.max(0, from); x < Math.min(picture.width, to); x++)
      out[y * picture.width + x] = mask[y * picture.width + x] ?? 0;
  return out;
}

/** Cuts the text's extent into equal columns, one per character. */
function equalColumns(picture: Picture, mask: Mask): Mask[] {
  const [left, right] = textExtent(columnCounts(picture, mask));
  const step = (right - left) / CODE_LENGTH;
  return Array.from({ length: CODE_LENGTH }, (_, i) =>
    columnsMask(picture, mask, Math.round(left + i * step), Math.round(left + (i + 1) * step)),
  );
}

/** Cuts at the emptiest column near each equal split: the gaps between glyphs. */
function gapColumns(picture: Picture, mask: Mask): Mask[] {
  const counts = columnCounts(picture, mask);
  const [left, right] = textExtent(counts);
  const step = (right - left) / CODE_LENGTH;
  const cuts = [left];
  for (let i = 1; i < CODE_LENGTH; i++) {
    const guess = Math.round(left + i * step);
    let best = guess;
    for (let x = guess - Math.round(step / 3); x <= guess + Math.round(step / 3); x++)
      if ((counts[x] ?? Number.POSITIVE_INFINITY) < (counts[best] ?? Number.POSITIVE_INFINITY)) best = x;
    cuts.push(best);
  }
  cuts.push(right);
  return Array.from({ length: CODE_LENGTH }, (_, i) =>
    columnsMask(picture, mask, cuts[i] ?? 0, cuts[i + 1] ?? 0),
  );
}

/**
 * Splits the foreground by colour (k-means, one cluster per character, seeded at the equal
 * columns' centres): a renderer that draws each glyph in its own colour gives each glyph away,
 * even where glyphs touch.
 */
function colourClusters(picture: Picture, mask: Mask): Mask[] {
  const { width } = picture;
  const pixels: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i]) pixels.push(i);
  const colour = (i: number) => [
    picture.rgb[i * 3] ?? 0,
    picture.rgb[i * 3 + 1] ?? 0,
    picture.rgb[i * 3 + 2] ?? 0,
  ];
  const seeds = equalColumns(picture, mask).map((columns) => {
    const sums = [0, 0, 0];
    let n = 0;
    for (let i = 0; i < columns.length; i++)
      if (columns[i]) {
        const [r, g, b] = colour(i);
        sums[0] = (sums[0] ?? 0) + (r ?? 0);
        sums[1] = (sums[1] ?? 0) + (g ?? 0);
        sums[2] = (sums[2] ?? 0) + (b ?? 0);
        n++;
      }
    return sums.map((sum) => sum / Math.max(1, n));
  });
  let assignment = new Int32Array(pixels.length);
  for (let round = 0; round < 8; round++) {
    assignment = Int32Array.from(pixels, (i) => {
      const c = colour(i);
      let best = 0;
      let bestDistance = Number.POSITIVE_INFINITY;
      seeds.forEach((seed, k) => {
        const distance =
          ((c[0] ?? 0) - (seed[0] ?? 0)) ** 2 +
          ((c[1] ?? 0) - (seed[1] ?? 0)) ** 2 +
          ((c[2] ?? 0) - (seed[2] ?? 0)) ** 2;
        if (distance < bestDistance) {
          bestDistance = distance;
          best = k;
        }
      });
      return best;
    });
    for (let k = 0; k < seeds.length; k++) {
      const sums = [0, 0, 0];
      let n = 0;
      pixels.forEach((i, p) => {
        if (assignment[p] !== k) return;
        const c = colour(i);
        for (let ch = 0; ch < 3; ch++) sums[ch] = (sums[ch] ?? 0) + (c[ch] ?? 0);
        n++;
      });
      if (n > 0) seeds[k] = sums.map((sum) => sum / n);
    }
  }
  const clusters = seeds.map(() => new Uint8Array(mask.length));
  pixels.forEach((i, p) => {
    const cluster = clusters[assignment[p] ?? 0];
    if (cluster) cluster[i] = 1;
  });
  const meanX = (cluster: Mask) => {
    let sum = 0;
    let n = 0;
    for (let i = 0; i < cluster.length; i++)
      if (cluster[i]) {
        sum += i % width;
        n++;
      }
    return n === 0 ? Number.POSITIVE_INFINITY : sum / n;
  };
  return clusters.sort((a, b) => meanX(a) - meanX(b));
}

/**
 * Splits the foreground by exact colour: the most frequent colours among the foreground pixels,
 * one per character, ordered by where they sit. A renderer that fills each glyph with one solid
 * colour hands the glyphs over, noise and overlap notwithstanding.
 */
function exactColours(picture: Picture, mask: Mask): Mask[] {
  const counts = new Map<number, number>();
  const keyOf = (i: number) =>
    ((picture.rgb[i * 3] ?? 0) << 16) | ((picture.rgb[i * 3 + 1] ?? 0) << 8) | (picture.rgb[i * 3 + 2] ?? 0);
  for (let i = 0; i < mask.length; i++) if (mask[i]) counts.set(keyOf(i), (counts.get(keyOf(i)) ?? 0) + 1);
  const top = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, CODE_LENGTH)
    .map(([key]) => key);
  const glyphs = top.map((key) => {
    const glyph = new Uint8Array(mask.length);
    let sumX = 0;
    let n = 0;
    for (let i = 0; i < mask.length; i++)
      if (mask[i] && keyOf(i) === key) {
        glyph[i] = 1;
        sumX += i % picture.width;
        n++;
      }
    return { glyph, x: sumX / Math.max(1, n) };
  });
  return glyphs.sort((a, b) => a.x - b.x).map(({ glyph }) => glyph);
}

/** The foreground pixels of a glyph's mask, as coordinates. */
function pointsOf(picture: Picture, glyph: Mask): { px: Float64Array; py: Float64Array } {
  let count = 0;
  for (let i = 0; i < glyph.length; i++) if (glyph[i]) count++;
  const px = new Float64Array(count);
  const py = new Float64Array(count);
  for (let i = 0, n = 0; i < glyph.length; i++)
    if (glyph[i]) {
      px[n] = i % picture.width;
      py[n++] = Math.floor(i / picture.width);
    }
  return { px, py };
}

/** The best-matching character for one glyph's pixels, over every shear; and its score. */
export function classify({ px, py }: { px: Float64Array; py: Float64Array }): {
  character: string;
  score: number;
} {
  const count = px.length;
  let best = { character: '?', score: Number.NEGATIVE_INFINITY };
  if (count < 5) return best;
  const centreY = py.reduce((sum, y) => sum + y, 0) / count;
  // A robust box: the 2nd to 98th percentile each way, so a stray pixel does not stretch it.
  const at = (sorted: Float64Array, q: number) => sorted[Math.min(count - 1, Math.floor(q * count))] ?? 0;
  const ys = Float64Array.from(py).sort();
  const y0 = at(ys, 0.02);
  const y1 = at(ys, 0.98) + 1;
  const moved = new Float64Array(count);
  const grid = new Float64Array(GRID_X * GRID_Y);
  for (const shear of SHEARS) {
    for (let n = 0; n < count; n++) moved[n] = (px[n] ?? 0) - shear * ((py[n] ?? 0) - centreY);
    const xs = Float64Array.from(moved).sort();
    const x0 = at(xs, 0.02);
    const x1 = at(xs, 0.98) + 1;
    grid.fill(0);
    for (let n = 0; n < count; n++) {
      const gx = Math.floor((((moved[n] ?? 0) - x0) / Math.max(1, x1 - x0)) * GRID_X);
      const gy = Math.floor((((py[n] ?? 0) - y0) / Math.max(1, y1 - y0)) * GRID_Y);
      if (gx >= 0 && gy >= 0 && gx < GRID_X && gy < GRID_Y)
        grid[gy * GRID_X + gx] = (grid[gy * GRID_X + gx] ?? 0) + 1;
    }
    const sample = normalised(grid);
    for (let t = 0; t < TEMPLATES.length; t++) {
      let score = 0;
      const offset = t * CELLS;
      for (let i = 0; i < CELLS; i++) score += (sample[i] as number) * (TEMPLATE_CELLS[offset + i] as number);
      if (score > best.score) best = { character: CODE_ALPHABET[t] ?? '?', score };
    }
  }
  return best;
}

/**
 * Segmentation and recognition at once: the cuts between glyphs are chosen, among positions near
 * the equal splits, so that the glyphs between them match their best templates best (dynamic
 * programming over the cut positions). Glyphs that touch or overlap no longer need a gap.
 */
function bestCuts(picture: Picture, mask: Mask): { character: string; score: number }[] {
  const [left, right] = textExtent(columnCounts(picture, mask));
  const step = (right - left) / CODE_LENGTH;
  const { px, py } = pointsOf(picture, mask);
  const slice = (from: number, to: number) => {
    const inside: number[] = [];
    for (let n = 0; n < px.length; n++) if ((px[n] ?? 0) >= from && (px[n] ?? 0) < to) inside.push(n);
    return {
      px: Float64Array.from(inside, (n) => px[n] ?? 0),
      py: Float64Array.from(inside, (n) => py[n] ?? 0),
    };
  };
  const candidates: number[][] = [[left]];
  for (let i = 1; i < CODE_LENGTH; i++) {
    const guess = left + i * step;
    candidates.push([-9, -6, -3, 0, 3, 6, 9].map((offset) => Math.round(guess + offset)));
  }
  candidates.push([right]);
  // best[i][j]: the best total for the first i glyphs with cut i at candidates[i][j].
  let previous = [{ score: 0, glyphs: [] as { character: string; score: number }[] }];
  for (let i = 1; i < candidates.length; i++) {
    const current = (candidates[i] ?? []).map((to) => {
      let chosen = { score: Number.NEGATIVE_INFINITY, glyphs: [] as { character: string; score: number }[] };
      (candidates[i - 1] ?? []).forEach((from, j) => {
        const before = previous[j];
        if (!before || to - from < 6) return;
        const glyph = classify(slice(from, to));
        const score = before.score + glyph.score;
        if (score > chosen.score) chosen = { score, glyphs: [...before.glyphs, glyph] };
      });
      return chosen;
    });
    previous = current;
  }
  return previous[0]?.glyphs ?? [];
}

const MASKS: [string, (picture: Picture) => Mask][] = [
  ['colour distance > 60', byColourDistance(60)],
  ['darkness < 130', byDarkness(130)],
  ['colour distance > 110, despeckled', despeckled(byColourDistance(110), 3)],
  ['darkness < 130, despeckled', despeckled(byDarkness(130), 3)],
];

const SEGMENTERS: [string, (picture: Picture, mask: Mask) => Mask[]][] = [
  ['equal columns', equalColumns],
  ['gaps between columns', gapColumns],
  ['colour clusters', colourClusters],
  ['exact colours', exactColours],
];

/** Every combination of preprocessing and segmentation the matcher tries, by name. */
export const STRATEGY_NAMES = MASKS.flatMap(([maskName]) =>
  SEGMENTERS.map(([segmentName]) => `${maskName}; ${segmentName}`),
);

export const BEST_CUTS = 'darkness < 130, despeckled; cuts that match best';

/** The name of the strategy that trusts its own readings most; an attacker's choice without an oracle. */
export const MOST_CONFIDENT = 'most confident of all';

/**
 * What each strategy reads in an image (by strategy name), and the reading of the strategy whose
 * glyphs matched their templates best (MOST_CONFIDENT): an attacker needs no oracle for that one.
 */
export function readAll(png: Uint8Array): Map<string, string> {
  const picture = readPicture(png);
  const readings = new Map<string, string>();
  let confident = { reading: '', score: Number.NEGATIVE_INFINITY };
  for (const [maskName, masker] of MASKS) {
    const mask = masker(picture);
    for (const [segmentName, segment] of SEGMENTERS) {
      const glyphs = segment(picture, mask).map((glyph) => classify(pointsOf(picture, glyph)));
      const reading = glyphs.map((glyph) => glyph.character).join('');
      const score = glyphs.reduce((sum, glyph) => sum + glyph.score, 0);
      readings.set(`${maskName}; ${segmentName}`, reading);
      if (score > confident.score) confident = { reading, score };
    }
  }
  // The costliest strategy, on the mask that serves the others best.
  const glyphs = bestCuts(picture, despeckled(byDarkness(130), 3)(picture));
  const reading = glyphs.map((glyph) => glyph.character).join('');
  const score = glyphs.reduce((sum, glyph) => sum + glyph.score, 0);
  readings.set(BEST_CUTS, reading);
  if (score > confident.score) confident = { reading, score };
  readings.set(MOST_CONFIDENT, confident.reading);
  return readings;
}
