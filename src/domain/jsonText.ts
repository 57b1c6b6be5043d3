/**
 * An answer body already serialised: the UTF-8 bytes of the JSON text of a `T`. A handler returns
 * one where it keeps the text of an answer that is costly to rebuild (the channel list of a large
 * site); the dispatcher sends the bytes as they are (src/http/routes.ts), and outside production
 * parses them first, so the contract's response check sees the answer as for any other body.
 */
export class JsonText<T> {
  /** Never set: ties the text to the type it is the JSON of, so only a text of the body fits. */
  declare readonly of?: T;

  /**
   * Its compressed forms by coding, made once each by the HTTP layer: a kept text is sent again and
   * again, and compressing 13 MB costs more than building it.
   */
  readonly encoded = new Map<string, Promise<Buffer | undefined>>();

  constructor(readonly bytes: Buffer) {}
}

/**
 * The UTF-8 bytes of these texts, one after the other, each encoded once into one buffer. A page
 * made as one string (its records' texts concatenated) was flattened to be measured, then encoded
 * once to be hashed for its ETag and once more to be written (bench/pageSerialise.ts); joined and
 * then encoded, it is made twice.
 */
export function utf8Of(texts: readonly string[]): Buffer {
  let length = 0;
  for (const text of texts) length += Buffer.byteLength(text);
  const bytes = Buffer.allocUnsafe(length);
  let at = 0;
  for (const text of texts) at += bytes.write(text, at);
  return bytes;
}
