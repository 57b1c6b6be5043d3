import { pipeline, type Readable } from 'node:stream';
import { Assembler } from 'stream-json/assembler.js';
import parser from 'stream-json/parser.js';
import batch from 'stream-json/utils/batch.js';

/*
 * Where an import reads its document from. The import reads it twice (first to check every record
 * and collect the ids they use, then to write), and never needs more than one record at a time:
 * a file is parsed as a stream, so memory does not grow with the number of records.
 */

/** What a read of the document yields, in the order of the document. */
export type ImportEntry =
  /** The document is not a JSON object; nothing else follows. */
  | { kind: 'notObject' }
  /** A top-level key; `array` tells whether its value is an array (whose elements follow as records). */
  | { kind: 'section'; key: string; array: boolean }
  /** One element of a top-level array, at its position in that array. */
  | { kind: 'record'; section: string; index: number; value: unknown };

export interface ImportSource {
  /** Reads the document from its start; may be called again for another pass. */
  entries(): AsyncIterable<ImportEntry>;
  /** How far the current read has come, and of how much (bytes of a file, records of a document). */
  progress(): { done: number; total: number | undefined };
}

/** A document already in memory (tests, the demo seed): the same entries a file would give. */
export function documentSource(document: unknown): ImportSource {
  let done = 0;
  const total =
    typeof document === 'object' && document !== null && !Array.isArray(document)
      ? Object.values(document).reduce<number>(
          (sum, value) => sum + (Array.isArray(value) ? value.length : 0),
          0,
        )
      : 0;
  return {
    async *entries() {
      done = 0;
      if (typeof document !== 'object' || document === null || Array.isArray(document)) {
        yield { kind: 'notObject' };
        return;
      }
      for (const [key, value] of Object.entries(document)) {
        const array = Array.isArray(value);
        yield { kind: 'section', key, array };
        if (!array) continue;
        for (const [index, record] of value.entries()) {
          done++;
          yield { kind: 'record', section: key, index, value: record };
        }
      }
    },
    progress: () => ({ done, total }),
  };
}

/** The document is not valid JSON; the message says where the parser stopped. */
export class ImportSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportSyntaxError';
  }
}

type Token = parser.Token;

/** Tokens per batch handed from the parser's stream to the import (one await per batch, not per token). */
const TOKEN_BATCH = 4096;

/**
 * A JSON document read as a stream (stream-json's tokenizer), assembling one element of a
 * top-level array at a time. `open` opens the document afresh for each read; `size` is its length
 * in bytes when known (for progress), and `bytesRead` how much of it the current read consumed.
 */
export function streamSource(open: () => Readable & { bytesRead?: number }, size?: number): ImportSource {
  let current: (Readable & { bytesRead?: number }) | undefined;
  return {
    async *entries() {
      const input = open();
      current = input;
      // pipeline() passes an error of any stage (unreadable file, bad JSON) on to the loop below.
      const tokens = pipeline(
        input,
        parser.asStream({ streamValues: false }),
        batch.asStream({ batchSize: TOKEN_BATCH }),
        () => {},
      );
      const reader = new TopLevelReader();
      try {
        for await (const chunk of tokens as AsyncIterable<Token[]>) {
          const entries = reader.read(chunk);
          for (const entry of entries) yield entry;
          if (reader.finished) break;
        }
      } catch (error) {
        if (error instanceof Error && /^Parser /.test(error.message)) {
          throw new ImportSyntaxError(error.message.replace(/^Parser /, 'the parser '));
        }
        throw error;
      } finally {
        input.destroy();
        tokens.destroy();
      }
      if (!reader.finished && !reader.complete) throw new ImportSyntaxError('the document ends too early');
    },
    progress: () => ({ done: current?.bytesRead ?? 0, total: size }),
  };
}

/**
 * Turns the tokens of `{ "key": [ element, ... ], ... }` into entries: top-level keys, and each
 * element of a top-level array assembled alone. Any other top-level value is skipped token by
 * token (an entry says it was not an array).
 */
class TopLevelReader {
  /** Nesting depth in the document: 1 inside the top object, 2 inside a top-level array. */
  private depth = 0;
  private key = '';
  private index = 0;
  /** Depth of a top-level value that is being skipped, 0 when none is. */
  private skipping = 0;
  private readonly element = new Assembler();
  private inElement = false;
  /** The document was not an object: reading stops. */
  finished = false;
  /** The top-level object was closed. */
  complete = false;

  read(tokens: readonly Token[]): ImportEntry[] {
    const entries: ImportEntry[] = [];
    for (const token of tokens) {
      if (this.finished) break;
      if (this.inElement) {
        this.element.consume(token);
        if (this.element.done) {
          this.inElement = false;
          entries.push({
            kind: 'record',
            section: this.key,
            index: this.index++,
            value: this.element.current,
          });
        }
        continue;
      }
      if (this.skipping > 0) {
        if (token.name === 'startObject' || token.name === 'startArray') this.skipping++;
        else if (token.name === 'endObject' || token.name === 'endArray') this.skipping--;
        continue;
      }
      switch (this.depth) {
        case 0:
          if (token.name === 'startObject') this.depth = 1;
          else {
            entries.push({ kind: 'notObject' });
            this.finished = true;
          }
          break;
        case 1:
          if (token.name === 'keyValue') {
            this.key = token.value;
          } else if (token.name === 'endObject') {
            this.depth = 0;
            this.complete = true;
          } else if (token.name === 'startArray') {
            entries.push({ kind: 'section', key: this.key, array: true });
            this.depth = 2;
            this.index = 0;
          } else {
            entries.push({ kind: 'section', key: this.key, array: false });
            if (token.name === 'startObject') this.skipping = 1;
          }
          break;
        default:
          if (token.name === 'endArray') {
            this.depth = 1;
            break;
          }
          this.element.consume(token);
          if (this.element.done) {
            entries.push({
              kind: 'record',
              section: this.key,
              index: this.index++,
              value: this.element.current,
            });
          } else {
            this.inElement = true;
          }
      }
    }
    return entries;
  }
}
