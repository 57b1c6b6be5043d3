import { request as httpRequest } from 'node:http';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import jpeg from 'jpeg-js';
import omggif from 'omggif';
import { PNG } from 'pngjs';
import { signAccessToken } from '../../src/domain/crypto/tokens.ts';
import { SCOPES } from '../../src/domain/principal.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { type Listening, listen } from '../support/server.ts';

/*
 * Uploading a user's avatar over HTTP into the run's database (SQLite, or PostgreSQL with
 * TEST_DATABASE_URL): the upload is judged by its bytes, limited in bytes while it streams and in
 * dimensions before it is decoded, re-encoded so that nothing but its pixels survives, and served
 * by get user avatar as a PNG with a strong ETag. Every refusal has its status.
 */

/** Small, so that the limits are met with small files. */
const MAX_BYTES = 64 * 1024;

let app: TestApp;
let usersKey: string;
let lisa: number;
let tom: number;

beforeAll(async () => {
  app = await startTestApp({ config: { avatarMaxBytes: MAX_BYTES } });
  usersKey = await app.createApiKey(['Users']);
  const account = { passwordHash: 'unused', passwordSalt: 'unused' };
  lisa = (await app.db.user.create({ data: { userName: 'lisa', avatarUrl: '/upload/lisa.png', ...account } }))
    .id;
  tom = (await app.db.user.create({ data: { userName: 'tom', ...account } })).id;
});
afterAll(async () => {
  await app.close();
});

/** An RGBA image whose every pixel is worked out from its position, so pixels can be compared. */
function pixelsOf(width: number, height: number): Buffer {
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    data[i * 4] = (i * 7) % 256;
    data[i * 4 + 1] = (i * 13) % 256;
    data[i * 4 + 2] = (i * 29) % 256;
    data[i * 4 + 3] = 255;
  }
  return data;
}

function pngOf(width: number, height: number): Buffer {
  const png = new PNG({ width, height });
  png.data = pixelsOf(width, height);
  return PNG.sync.write(png);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

const SECRET_TEXT = 'Comment\0camera serial 8841-secret';
const PAYLOAD = '<script>alert("payload")</script>';

/** A PNG with a tEXt metadata chunk after its header and a payload after its end. */
function pngWithExtras(width: number, height: number): Buffer {
  const plain = pngOf(width, height);
  const afterHeader = 8 + 25; // signature, then IHDR (4 length + 4 type + 13 data + 4 CRC)
  return Buffer.concat([
    plain.subarray(0, afterHeader),
    chunk('tEXt', Buffer.from(SECRET_TEXT, 'latin1')),
    plain.subarray(afterHeader),
    Buffer.from(PAYLOAD),
  ]);
}

/** A PNG whose header states these dimensions, with no pixel data at all. */
function pngHeaderOnly(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 6;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function jpegOf(width: number, height: number): Buffer {
  return jpeg.encode({ width, height, data: pixelsOf(width, height) }, 90).data;
}

function gifOf(width: number, height: number): Buffer {
  const out = Buffer.alloc(1024 + width * height * 2);
  const writer = new omggif.GifWriter(out, width, height, {
    palette: [0xff0000, 0x00ff00, 0x0000ff, 0xffffff],
  });
  const indexed = Array.from({ length: width * height }, (_, i) => i % 4);
  writer.addFrame(0, 0, width, height, indexed);
  return out.subarray(0, writer.end());
}

const upload = (id: number, file: Buffer, filename = 'avatar.png', contentType = 'image/png') =>
  app.request
    .post(`/api/v1/users/${id}/avatar`)
    .set('X-SS-API-KEY', usersKey)
    .attach('file', file, { filename, contentType });

/**
 * A request that declares a 50 MiB multipart body and sends none of it: what the service answers
 * can only come from its headers.
 */
async function declaredOnly(
  id: number,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const server: Listening = await listen(app.app);
  try {
    const { port } = new URL(server.base);
    return await new Promise((resolve, reject) => {
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port: Number(port),
          method: 'POST',
          path: `/api/v1/users/${id}/avatar`,
          headers: {
            ...headers,
            'Content-Type': 'multipart/form-data; boundary=xyz',
            'Content-Length': String(50 * 1024 * 1024),
          },
        },
        (response) => {
          let body = '';
          response.on('data', (part: Buffer) => {
            body += part.toString();
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
      request.flushHeaders();
    });
  } finally {
    await server.close();
  }
}

const decoded = (bytes: Buffer) => PNG.sync.read(bytes);

function userToken(id: number): string {
  return signAccessToken({ id, kind: 'user', scopes: [], version: 0 }, app.config.cmsSecret, {
    expiresIn: 600,
  }).token;
}

describe('upload a user avatar', () => {
  test('a PNG with a metadata chunk and an appended payload is stored re-encoded: its pixels, nothing else', async () => {
    const sent = pngWithExtras(48, 32);
    const response = await upload(lisa, sent);
    expect(response.status).toBe(200);
    expect(response.headers.etag).toBe('"v1"');
    expect(response.body.value).toMatchObject({
      userId: lisa,
      width: 48,
      height: 32,
      version: 1,
      url: `/api/v1/users/${lisa}/avatar`,
    });

    const served = await app.request.get(`/api/v1/users/${lisa}/avatar`).buffer(true);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.headers['cache-control']).toBe('public, no-cache');
    expect(served.headers.etag).toBe('"v1"');
    const bytes = served.body as Buffer;
    expect(bytes.length).toBe(response.body.value.size);
    // The same pixels...
    const image = decoded(bytes);
    expect([image.width, image.height]).toEqual([48, 32]);
    expect(Buffer.compare(image.data, pixelsOf(48, 32))).toBe(0);
    // ...and nothing else: no text chunk, no payload, nothing after IEND.
    expect(bytes.includes(Buffer.from('tEXt'))).toBe(false);
    expect(bytes.includes(Buffer.from('8841-secret'))).toBe(false);
    expect(bytes.includes(Buffer.from('<script>'))).toBe(false);
    expect(bytes.subarray(-8, -4).toString('latin1')).toBe('IEND');
    expect(sent.includes(Buffer.from('<script>'))).toBe(true);

    const fresh = await app.request.get(`/api/v1/users/${lisa}/avatar`).set('If-None-Match', '"v1"');
    expect(fresh.status).toBe(304);
    expect(fresh.text ?? '').toBe('');
  });

  test('the upload is recorded as user.avatarChanged, and a new upload replaces the image with a new version', async () => {
    const before = await app.db.event.count({ where: { type: 'user.avatarChanged' } });
    const response = await upload(lisa, jpegOf(40, 20), 'me.jpg', 'image/jpeg');
    expect(response.status).toBe(200);
    expect(response.body.value).toMatchObject({ width: 40, height: 20, version: 2 });
    expect(response.headers.etag).toBe('"v2"');
    expect(await app.db.event.count({ where: { type: 'user.avatarChanged' } })).toBe(before + 1);
    const event = await app.db.event.findFirst({ orderBy: { id: 'desc' } });
    expect(event).toMatchObject({ type: 'user.avatarChanged', resourceType: 'user', resourceId: lisa });
    expect(JSON.parse(event?.payload ?? '{}')).toMatchObject({ width: 40, height: 20, version: 2 });

    // The old validator no longer matches: the new image is sent.
    const served = await app.request
      .get(`/api/v1/users/${lisa}/avatar`)
      .set('If-None-Match', '"v1"')
      .buffer(true);
    expect(served.status).toBe(200);
    expect(served.headers.etag).toBe('"v2"');
    const image = decoded(served.body as Buffer);
    expect([image.width, image.height]).toEqual([40, 20]);
  });

  test('a GIF is accepted (its first frame), and a user without an upload keeps the address answer', async () => {
    const response = await upload(tom, gifOf(16, 8), 'anim.gif', 'image/gif');
    expect(response.status).toBe(200);
    expect(response.body.value).toMatchObject({ width: 16, height: 8, version: 1 });
    const served = await app.request.get(`/api/v1/users/${tom}/avatar`).buffer(true);
    const image = decoded(served.body as Buffer);
    // Palette index 0 is red, 1 green: the first two pixels.
    expect([...image.data.subarray(0, 8)]).toEqual([255, 0, 0, 255, 0, 255, 0, 255]);

    const account = { passwordHash: 'unused', passwordSalt: 'unused' };
    const plain = await app.db.user.create({ data: { userName: 'plain', ...account } });
    const address = await app.request.get(`/api/v1/users/${plain.id}/avatar`);
    expect(address.status).toBe(200);
    expect(address.headers['content-type']).toMatch(/^application\/json/);
    expect(address.body).toEqual({ value: '/assets/images/default-avatar.png' });
  });

  test('an HTML polyglot named .png and declared image/png is refused (400), and so is WebP', async () => {
    const polyglot = Buffer.from(`<html><body>${PAYLOAD}</body></html>\n\x89PNG\r\n\x1a\n`);
    const refused = await upload(tom, polyglot, 'avatar.png', 'image/png');
    expect(refused.status).toBe(400);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}invalid-image`,
      detail: 'The file is not a PNG, JPEG or GIF image',
    });
    const webp = Buffer.concat([
      Buffer.from('RIFF'),
      Buffer.alloc(4),
      Buffer.from('WEBPVP8 '),
      Buffer.alloc(32),
    ]);
    const webpRefused = await upload(tom, webp, 'a.webp', 'image/webp');
    expect(webpRefused.status).toBe(400);
    expect(webpRefused.body.type).toBe(`${PROBLEM_TYPE_BASE}invalid-image`);
    // A PNG signature with damaged data after a good header.
    const damaged = Buffer.concat([pngOf(8, 8).subarray(0, 40), Buffer.from('not deflate data at all')]);
    const damagedRefused = await upload(tom, damaged);
    expect(damagedRefused.status).toBe(400);
    expect(damagedRefused.body.type).toBe(`${PROBLEM_TYPE_BASE}invalid-image`);
    // Nothing was stored for these: tom keeps his GIF.
    expect((await app.db.userAvatar.findUnique({ where: { userId: tom } }))?.version).toBe(1);
  });

  test('no file part, a plain field, or two files: 400', async () => {
    const field = await app.request
      .post(`/api/v1/users/${tom}/avatar`)
      .set('X-SS-API-KEY', usersKey)
      .field('file', 'not a file');
    expect(field.status).toBe(400);
    expect(field.body.detail).toBe('The body must hold exactly one part, the image file, and nothing else');
    const two = await app.request
      .post(`/api/v1/users/${tom}/avatar`)
      .set('X-SS-API-KEY', usersKey)
      .attach('file', pngOf(4, 4), 'a.png')
      .attach('other', pngOf(4, 4), 'b.png');
    expect(two.status).toBe(400);
    expect(two.body.detail).toBe('The body must hold exactly one part, the image file, and nothing else');
    const none = await app.request
      .post(`/api/v1/users/${tom}/avatar`)
      .set('X-SS-API-KEY', usersKey)
      .set('Content-Type', 'multipart/form-data; boundary=xyz')
      .send('--xyz--\r\n');
    expect(none.status).toBe(400);
    expect(none.body.detail).toBe('The body has no file part; send the image as the one file part');
  });

  test('a body that is not multipart/form-data: 415', async () => {
    const response = await app.request
      .post(`/api/v1/users/${tom}/avatar`)
      .set('X-SS-API-KEY', usersKey)
      .send({ file: 'x' });
    expect(response.status).toBe(415);
    expect(response.body).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}unsupported-media-type`,
      detail: "Content-Type 'application/json' is not supported here; send multipart/form-data",
    });
  });

  test('dimensions above 1024×1024 stated by the header: 422, before any pixel is decoded', async () => {
    const wide = await upload(tom, pngOf(1025, 1));
    expect(wide.status).toBe(422);
    expect(wide.body).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}image-too-large`,
      detail: 'The image is 1025×1 pixels; an avatar may be at most 1024×1024',
    });
    // A header that claims 10 billion pixels and holds none: refused from the header alone.
    const bomb = await upload(tom, pngHeaderOnly(100_000, 100_000));
    expect(bomb.status).toBe(422);
    expect(bomb.body.type).toBe(`${PROBLEM_TYPE_BASE}image-too-large`);
    // The JPEG's frame marker and the GIF's logical screen are read the same way.
    const tallJpeg = await upload(tom, jpegOf(8, 1100), 'a.jpg', 'image/jpeg');
    expect(tallJpeg.status).toBe(422);
    expect(tallJpeg.body.detail).toBe('The image is 8×1100 pixels; an avatar may be at most 1024×1024');
    const wideGif = await upload(tom, gifOf(1500, 2), 'a.gif', 'image/gif');
    expect(wideGif.status).toBe(422);
    expect(wideGif.body.detail).toBe('The image is 1500×2 pixels; an avatar may be at most 1024×1024');
  });

  test('a file longer than the limit: 413 while it streams, and at once for a declared length', async () => {
    // Random bytes do not compress: the PNG is well over the limit, the body within the overhead.
    const noise = new PNG({ width: 140, height: 140 });
    noise.data = Buffer.from(Array.from({ length: 140 * 140 * 4 }, () => Math.floor(Math.random() * 256)));
    const big = PNG.sync.write(noise);
    expect(big.length).toBeGreaterThan(MAX_BYTES);
    expect(big.length).toBeLessThan(MAX_BYTES + 16 * 1024);
    const streamed = await upload(tom, big);
    expect(streamed.status).toBe(413);
    expect(streamed.body).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}payload-too-large`,
      detail: `The file is longer than ${MAX_BYTES} bytes, the most an avatar may have`,
    });

    // A declared length far beyond: answered before a byte of the body is sent.
    const answer = await declaredOnly(tom, { 'X-SS-API-KEY': usersKey });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).type).toBe(`${PROBLEM_TYPE_BASE}payload-too-large`);
    expect((await app.db.userAvatar.findUnique({ where: { userId: tom } }))?.version).toBe(1);
  });

  test('a user token uploads its own avatar, not another user’s (403); no credentials 401; no Users scope 403', async () => {
    const own = await app.request
      .post(`/api/v1/users/${tom}/avatar`)
      .set('Authorization', `Bearer ${userToken(tom)}`)
      .attach('file', pngOf(5, 5), 'me.png');
    expect(own.status).toBe(200);
    expect(own.body.value).toMatchObject({ width: 5, height: 5, version: 2 });

    const other = await app.request
      .post(`/api/v1/users/${lisa}/avatar`)
      .set('Authorization', `Bearer ${userToken(tom)}`)
      .attach('file', pngOf(5, 5), 'me.png');
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}forbidden`,
      detail: "A user's access token may change only its own avatar",
    });

    const anonymous = await app.request
      .post(`/api/v1/users/${tom}/avatar`)
      .attach('file', pngOf(5, 5), 'a.png');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.type).toBe(`${PROBLEM_TYPE_BASE}unauthorized`);

    const narrow = await app.createApiKey(SCOPES.filter((scope) => scope !== 'Users'));
    const noScope = await app.request
      .post(`/api/v1/users/${tom}/avatar`)
      .set('X-SS-API-KEY', narrow)
      .attach('file', pngOf(5, 5), 'a.png');
    expect(noScope.status).toBe(403);
    expect(noScope.body.detail).toBe("The credentials do not carry the 'Users' scope this operation needs");
    expect((await app.db.userAvatar.findUnique({ where: { userId: lisa } }))?.version).toBe(2);
  });

  test('an unknown user: 404; a deleted user takes its avatar along', async () => {
    const missing = await upload(tom + 1000, pngOf(4, 4));
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}not-found`,
      detail: `User ${tom + 1000} does not exist`,
    });

    const account = { passwordHash: 'unused', passwordSalt: 'unused' };
    const gone = await app.db.user.create({ data: { userName: 'gone', ...account } });
    expect((await upload(gone.id, pngOf(4, 4))).status).toBe(200);
    await app.db.user.delete({ where: { id: gone.id } });
    expect(await app.db.userAvatar.count({ where: { userId: gone.id } })).toBe(0);
  });
});
