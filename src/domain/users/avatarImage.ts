import jpeg from 'jpeg-js';
import omggif from 'omggif';
import { PNG } from 'pngjs';
import { DomainError } from '../errors.ts';

/*
 * An uploaded avatar is judged by its bytes alone — never by its file name or the media type its
 * part declares — and never stored as it came: its dimensions are read from its header and checked
 * before anything is decoded, then its pixels are decoded and encoded afresh as a PNG. Whatever
 * else the file held (metadata chunks, EXIF, comments, bytes after the image's end, a second
 * format it also parses as) is not in what the service stores and serves. Pure JavaScript decoders
 * only (pngjs, jpeg-js, omggif): no native image library parses uploads.
 */

/** The widest and tallest avatar accepted. */
export const AVATAR_MAX_SIDE = 1024;
/** Pixels an avatar may have: what the decoded image costs in memory is 4 bytes each. */
export const AVATAR_MAX_PIXELS = AVATAR_MAX_SIDE * AVATAR_MAX_SIDE;

export type ImageKind = 'png' | 'jpeg' | 'gif' | 'webp';

export interface Dimensions {
  width: number;
  height: number;
}

export interface AvatarImage extends Dimensions {
  /** The PNG the service encoded. */
  png: Buffer;
}

const invalidImage = (message: string) => new DomainError('invalid-image', message);

const startsWith = (bytes: Uint8Array, signature: readonly number[], at = 0) =>
  bytes.length >= at + signature.length && signature.every((byte, i) => bytes[at + i] === byte);

const ascii = (text: string) => [...text].map((character) => character.charCodeAt(0));

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The image format the bytes begin with (magic numbers), or undefined. */
export function sniffImage(bytes: Uint8Array): ImageKind | undefined {
  if (startsWith(bytes, PNG_SIGNATURE)) return 'png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'webp';
  return undefined;
}

const view = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** A JPEG's frame size, from its first start-of-frame marker (SOF0–SOF15 but DHT, JPG and DAC). */
function jpegDimensions(bytes: Buffer): Dimensions | undefined {
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1] ?? 0;
    // Fill bytes, and markers without a length (restart markers, TEM).
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2;
      continue;
    }
    const length = bytes.readUInt16BE(at + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      if (at + 9 > bytes.length) return undefined;
      return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
    }
    if (length < 2) return undefined;
    at += 2 + length;
  }
  return undefined;
}

/** The dimensions the image's header states, read without decoding anything. */
export function headerDimensions(kind: ImageKind, bytes: Uint8Array): Dimensions | undefined {
  const buffer = view(bytes);
  switch (kind) {
    case 'png':
      // The first chunk must be IHDR: width and height, big-endian, at 16 and 20.
      if (buffer.length < 24 || buffer.toString('latin1', 12, 16) !== 'IHDR') return undefined;
      return { width: buffer.readUInt32BE(16), height: buffer.readUInt32BE(20) };
    case 'gif':
      // The logical screen: little-endian, at 6 and 8.
      if (buffer.length < 10) return undefined;
      return { width: buffer.readUInt16LE(6), height: buffer.readUInt16LE(8) };
    case 'jpeg':
      return jpegDimensions(buffer);
    case 'webp':
      return undefined;
  }
}

/** Throws unless the dimensions are within the avatar's limits. */
export function assertAcceptedDimensions({ width, height }: Dimensions): void {
  if (width < 1 || height < 1) throw invalidImage('The image has no pixels');
  if (width > AVATAR_MAX_SIDE || height > AVATAR_MAX_SIDE || width * height > AVATAR_MAX_PIXELS) {
    throw new DomainError(
      'image-too-large',
      `The image is ${width}×${height} pixels; an avatar may be at most ${AVATAR_MAX_SIDE}×${AVATAR_MAX_SIDE}`,
    );
  }
}

interface Pixels extends Dimensions {
  /** RGBA, 4 bytes a pixel, row by row. */
  rgba: Uint8Array;
}

/**
 * A PNG up to the end of its IEND chunk: what follows the image's end (an appended payload) is not
 * part of it, and the decoder would refuse the whole file for it. Unchanged when no IEND is found.
 */
function pngThroughEnd(bytes: Buffer): Buffer {
  let at = PNG_SIGNATURE.length;
  while (at + 12 <= bytes.length) {
    const end = at + 12 + bytes.readUInt32BE(at);
    if (bytes.toString('latin1', at + 4, at + 8) === 'IEND') return bytes.subarray(0, end);
    at = end;
  }
  return bytes;
}

function decodeGif(bytes: Buffer): Pixels {
  const reader = new omggif.GifReader(bytes);
  const frame = reader.frameInfo(0);
  if (frame.x + frame.width > reader.width || frame.y + frame.height > reader.height) {
    throw invalidImage('The GIF image is damaged: its first frame lies outside its screen');
  }
  const rgba = new Uint8Array(reader.width * reader.height * 4);
  reader.decodeAndBlitFrameRGBA(0, rgba);
  return { width: reader.width, height: reader.height, rgba };
}

function decode(kind: Exclude<ImageKind, 'webp'>, bytes: Buffer): Pixels {
  switch (kind) {
    case 'png': {
      const png = PNG.sync.read(pngThroughEnd(bytes));
      return { width: png.width, height: png.height, rgba: png.data };
    }
    case 'jpeg': {
      const image = jpeg.decode(bytes, {
        useTArray: true,
        formatAsRGBA: true,
        // Beyond the header's check: the decoder itself refuses to allocate more than this.
        maxResolutionInMP: AVATAR_MAX_PIXELS / 1_000_000 + 0.1,
        maxMemoryUsageInMB: 64,
      });
      return { width: image.width, height: image.height, rgba: image.data };
    }
    case 'gif':
      return decodeGif(bytes);
  }
}

/**
 * The avatar the service stores for these uploaded bytes: a PNG of their pixels. Throws
 * `invalid-image` for anything but a PNG, JPEG or GIF that decodes whole (WebP is recognised but
 * has no pure JavaScript decoder here, so it is refused too), `image-too-large` for dimensions
 * above the limits — stated by the header, checked before decoding.
 */
export function reencodeAvatar(bytes: Uint8Array): AvatarImage {
  const kind = sniffImage(bytes);
  if (kind === undefined) throw invalidImage('The file is not a PNG, JPEG or GIF image');
  if (kind === 'webp') throw invalidImage('WebP images are not accepted; send a PNG, JPEG or GIF');
  const stated = headerDimensions(kind, bytes);
  if (stated === undefined) throw invalidImage(`The ${kind.toUpperCase()} image has no readable header`);
  assertAcceptedDimensions(stated);
  let pixels: Pixels;
  try {
    pixels = decode(kind, view(bytes));
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw invalidImage(`The ${kind.toUpperCase()} image could not be decoded`);
  }
  if (pixels.width !== stated.width || pixels.height !== stated.height) {
    throw invalidImage(`The ${kind.toUpperCase()} image's header does not match its pixels`);
  }
  const png = new PNG({ width: pixels.width, height: pixels.height });
  png.data = Buffer.from(pixels.rgba.buffer, pixels.rgba.byteOffset, pixels.rgba.byteLength);
  return { width: pixels.width, height: pixels.height, png: PNG.sync.write(png) };
}
