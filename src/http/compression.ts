import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Application, Request, Response } from 'express';

/*
 * Compression of answers negotiated with Accept-Encoding (docs/operating/configuration.md,
 * COMPRESSION and COMPRESSION_MIN_BYTES). Small answers go as they are: compressing them costs more
 * CPU than the bytes it saves. Dynamic answers are compressed with a cheap brotli quality; the
 * contract and the docs page, which change only with a build, are compressed once at the best.
 *
 * ETags: the app's weak ETag of the uncompressed text is kept for every coding. RFC 9110 §8.8.3
 * lets a weak validator stand for semantically equivalent representations, which the codings of one
 * text are; a strong ETag names exactly one representation, so it gets the coding appended.
 */

export type Coding = 'br' | 'gzip';

/** The file name ending of a file's compressed copy the build writes beside it. */
export const PRECOMPRESSED_SUFFIX: Readonly<Record<Coding, string>> = { br: '.br', gzip: '.gz' };

/** Per app, the smallest answer compressed; absent: compression is off. */
// Not shared state: a side table of each app's own setting, collected with its app.
const thresholds = new WeakMap<Application, number>();

/**
 * Turns compression on for the app's answers (off when minBytes is undefined). The app's own
 * res.send (express gives each app a response prototype of its own) compresses what it sends:
 * res.json, problems, the contract; an answer sent otherwise (src/http/routes.ts) calls
 * negotiateCoding itself. Nothing is added to a request that sends below the threshold.
 */
export function setCompression(app: Application, minBytes: number | undefined): void {
  if (minBytes === undefined) {
    thresholds.delete(app);
    return;
  }
  thresholds.set(app, minBytes);
  const prototype = (app as Application & { response: { send: SendFunction } }).response;
  const send = prototype.send;
  prototype.send = function compressingSend(this: Response, body?: unknown): Response {
    if (
      (typeof body !== 'string' && !Buffer.isBuffer(body)) ||
      this.statusCode === 204 ||
      this.statusCode === 304 ||
      this.getHeader('Content-Encoding') !== undefined
    ) {
      return send.call(this, body);
    }
    const coding = negotiateCoding(this.req, this, Buffer.byteLength(body));
    if (coding === undefined) return send.call(this, body);
    sendCompressed(this, body, coding, (done) => compress(body, coding, 'dynamic', done));
    return this;
  };
}

/**
 * What res.send does before it writes a body — Content-Type, the app's ETag (of the uncompressed
 * body, made per coding when strong), 304 when the request is fresh — then the body compressed as
 * coding by encode (the body as it is if that fails). node sends no body for HEAD.
 */
function sendCompressed(
  res: Response,
  body: string | Buffer,
  coding: Coding,
  encode: (done: Done) => void,
): void {
  const type = res.getHeader('Content-Type');
  if (type === undefined) res.type(typeof body === 'string' ? 'html' : 'bin');
  else if (typeof body === 'string' && typeof type === 'string' && !/;\s*charset=/i.test(type)) {
    res.setHeader('Content-Type', `${type}; charset=utf-8`);
  }
  const etagOf = res.app.get('etag fn') as ((body: string | Buffer, encoding?: string) => string) | undefined;
  if (typeof etagOf === 'function' && res.getHeader('ETag') === undefined) {
    const etag = etagOf(body, 'utf8');
    if (etag) res.setHeader('ETag', etagFor(etag, coding));
  }
  if (res.req.fresh) {
    res.removeHeader('Content-Type');
    res.status(304).end();
    return;
  }
  encode((error, compressed) => finish(res, body, coding, error, compressed));
}

/** Ends the response with the compressed body, or the body as it is when compressing failed. */
function finish(
  res: Response,
  body: string | Buffer,
  coding: Coding,
  error: Error | null,
  compressed: Buffer,
): void {
  if (res.destroyed) return;
  if (error) {
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
  } else endEncoded(res, compressed, coding);
}

/**
 * The coding an answer of byteLength bytes goes out with, or undefined for none; sets Vary when
 * the answer could have been compressed, so that a cache keeps the codings apart.
 */
export function negotiateCoding(req: Request, res: Response, byteLength: number): Coding | undefined {
  const minBytes = thresholds.get(req.app);
  if (minBytes === undefined || byteLength < minBytes) return undefined;
  res.vary('Accept-Encoding');
  const header = req.headers['accept-encoding'];
  return header === undefined ? undefined : preferredCoding(header);
}

/**
 * The coding Accept-Encoding prefers (RFC 9110 §12.5.3): the highest q of br and gzip (`*` stands
 * for either when unnamed), br on a tie, which browsers that list both ("gzip, deflate, br") want;
 * none if both are refused, or if identity is named with a higher q than either.
 */
export function preferredCoding(header: string): Coding | undefined {
  const q = new Map<string, number>();
  for (const element of header.split(',')) {
    const [name = '', ...parameters] = element.split(';');
    const coding = name.trim().toLowerCase();
    if (coding === '') continue;
    const weight = parameters
      .map((parameter) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(parameter))
      .find(Boolean);
    q.set(coding, weight?.[1] === undefined ? 1 : Number(weight[1]));
  }
  const qOf = (coding: string) => q.get(coding) ?? q.get('*') ?? 0;
  const br = qOf('br');
  const gzip = Math.max(qOf('gzip'), q.get('x-gzip') ?? 0);
  const best = Math.max(br, gzip);
  if (best === 0 || (q.get('identity') ?? 0) > best) return undefined;
  return br === best ? 'br' : 'gzip';
}

/** A strong ETag names one representation: the coding's is another; a weak one stands for all. */
export function etagFor(etag: string, coding: Coding): string {
  if (etag.startsWith('W/') || !etag.endsWith('"')) return etag;
  return `${etag.slice(0, -1)}-${coding}"`;
}

type SendFunction = (this: Response, body?: unknown) => Response;

type Done = (error: Error | null, result: Buffer) => void;

/**
 * Brotli's settings for a body of byteLength bytes. Dynamic answers get quality 2: on the list's
 * pages it was faster than 4 (0.8 against 1.3 ms for 145 KB, 0.05 against 0.28 ms for 5 KB) and as
 * small or smaller, and faster than gzip's level 6 (bench/README.md, "Compressed answers"). The
 * window is as large as the body needs, not brotli's 4 MiB default: the same output, and the
 * encoder's state no larger than the body (with many at once on the thread pool, ×1.4 answers).
 */
export function brotliParams(byteLength: number, quality: 'dynamic' | 'static'): Record<number, number> {
  const window = Math.ceil(Math.log2(byteLength + 1));
  return {
    [constants.BROTLI_PARAM_QUALITY]: quality === 'dynamic' ? 2 : constants.BROTLI_MAX_QUALITY,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    [constants.BROTLI_PARAM_SIZE_HINT]: byteLength,
    [constants.BROTLI_PARAM_LGWIN]: Math.min(
      constants.BROTLI_DEFAULT_WINDOW,
      Math.max(constants.BROTLI_MIN_WINDOW_BITS, window),
    ),
  };
}

/** gzip's level: 6 (zlib's default) for answers made per request, the best for built files. */
export const gzipLevel = (quality: 'dynamic' | 'static'): number =>
  quality === 'dynamic' ? 6 : constants.Z_BEST_COMPRESSION;

/** Quality: 'dynamic' for answers made per request (cheap), 'static' for built files (best). */
export function compress(
  body: string | Buffer,
  coding: Coding,
  quality: 'dynamic' | 'static',
  done: Done,
): void {
  if (coding === 'br') {
    const byteLength = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    brotliCompress(body, { params: brotliParams(byteLength, quality) }, done);
  } else gzip(body, { level: gzipLevel(quality) }, done);
}

/**
 * Ends the response with body compressed as coding, every other header already set (for senders
 * that do what res.send does themselves, src/http/routes.ts). node sends no body for HEAD.
 */
export function endCompressed(res: Response, body: string | Buffer, coding: Coding): void {
  compress(body, coding, 'dynamic', (error, compressed) => finish(res, body, coding, error, compressed));
}

/**
 * As endCompressed, for a body sent many times (a kept answer's text): compressed once per coding,
 * into `encoded`, which lives as long as the body.
 */
export function endCompressedOnce(
  res: Response,
  body: Buffer,
  coding: Coding,
  encoded: Map<string, Promise<Buffer | undefined>>,
): void {
  let compressed = encoded.get(coding);
  if (compressed === undefined) {
    compressed = new Promise((resolve) =>
      compress(body, coding, 'dynamic', (error, result) => resolve(error ? undefined : result)),
    );
    encoded.set(coding, compressed);
  }
  void compressed.then((result) => {
    if (res.destroyed) return;
    if (result === undefined) {
      res.setHeader('Content-Length', body.length);
      res.end(body);
    } else endEncoded(res, result, coding);
  });
}

/** Ends the response with a body already compressed as coding. */
export function endEncoded(res: Response, compressed: Buffer, coding: Coding): void {
  res.setHeader('Content-Encoding', coding);
  res.setHeader('Content-Length', compressed.length);
  res.end(compressed);
}

/**
 * A file served as it is built (the contract, the docs page): each coding is compressed once, at
 * the best quality, on the first request that asks for it, or read from the file the build wrote
 * next to it (`<file>.br`, `<file>.gz`).
 */
export class StaticAsset {
  readonly #encoded = new Map<Coding, Promise<Buffer | undefined>>();

  constructor(
    readonly body: Buffer,
    readonly precompressed: (coding: Coding) => Buffer | undefined = () => undefined,
  ) {}

  /** The body compressed as coding; undefined if compressing failed (the body then goes as is). */
  encoded(coding: Coding): Promise<Buffer | undefined> {
    let encoded = this.#encoded.get(coding);
    if (encoded === undefined) {
      const built = this.precompressed(coding);
      encoded =
        built !== undefined
          ? Promise.resolve(built)
          : new Promise((resolve) => {
              compress(this.body, coding, 'static', (error, result) => resolve(error ? undefined : result));
            });
      this.#encoded.set(coding, encoded);
    }
    return encoded;
  }

  /** Sends the asset (Content-Type and other headers already set), compressed when negotiated. */
  send(req: Request, res: Response): void {
    const coding = negotiateCoding(req, res, this.body.length);
    if (coding === undefined) {
      res.send(this.body);
      return;
    }
    sendCompressed(res, this.body, coding, (done) => {
      void this.encoded(coding).then((encoded) =>
        encoded === undefined ? done(new Error('not compressed'), this.body) : done(null, encoded),
      );
    });
  }
}
