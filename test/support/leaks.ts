import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gunzipSync, inflateSync } from 'node:zlib';
import { CONTRACT_FILE } from '../../src/contract.ts';

/*
 * The run-wide secret scan. Every secret a test file uses is registered here by the support code as
 * it appears — keys from fixtures and from the API, passwords and captcha answers sent, access
 * tokens and cookies issued, the token secret — and every log line of every app or process the
 * support starts, and every response body it sees, is kept. After the test file (see
 * leakEnvironment.ts) the file fails when any kept text holds any secret, in any encoding a log or
 * an answer could carry it: raw, JSON-escaped, percent-encoded, base64 or base64url (at any
 * alignment inside a longer encoded text).
 *
 * A secret may appear in the one place that issues it (a login answer's `accessToken`, a created
 * key's `key`, a process's console banner): that occurrence is cut before the text is kept.
 */

export interface Secret {
  value: string;
  /** What it is, for the report (never the value itself). */
  label: string;
  /**
   * `word`: short codes (captcha answers), matched only as a whole upper-case word: not inside a
   * longer run of letters and digits, nor as a group of a UUID.
   */
  kind: 'text' | 'word';
  /** Taken from what a client sent, not issued: void if the client also sent it as plain data. */
  sent?: boolean;
}

export interface Kept {
  /** Where the text came from: `log`, `response POST /api/v1/...`, `process <name>`. */
  source: string;
  text: string;
}

export interface Leak {
  label: string;
  encoding: string;
  source: string;
  /** The text around the find, with the secret itself replaced. */
  excerpt: string;
}

let published: string | undefined;

/**
 * Whether the value is printed in the contract (an example: `K7PQ`, the MD5 of `password`): a client
 * that sends it sends public data, which the docs and /openapi.json answer to anyone.
 */
function isPublished(value: string): boolean {
  published ??= readFileSync(CONTRACT_FILE, 'utf8');
  return published.includes(value);
}

/** Shorter values are not credentials and would match by chance; longer ones are not credentials either. */
const MIN_LENGTH = 8;
const MAX_LENGTH = 2048;
/** How much of each end of a long text is scanned: the scan's time and memory stay bounded. */
const KEPT_EDGE = 1_000_000;

function base64Forms(value: string): string[] {
  // A secret inside a longer encoded text starts at byte offset 0, 1 or 2 of a 3-byte group: the
  // characters that depend only on the secret's own bytes are the middle of each shifted encoding.
  const bytes = Buffer.from(value);
  const forms: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const end = 4 * Math.floor((shift + bytes.length) / 3);
    const middle = encoded.slice(shift === 0 ? 0 : 4, end);
    if (middle.length >= 12) forms.push(middle);
  }
  return forms;
}

function percentEveryByte(value: string, upper: boolean): string {
  const hex = Buffer.from(value).toString('hex');
  const pairs = hex.match(/../g) ?? [];
  return pairs.map((pair) => `%${upper ? pair.toUpperCase() : pair}`).join('');
}

/** Each spelling of the value a text could carry, named by encoding. */
export function encodingsOf(value: string): Map<string, string> {
  const forms = new Map<string, string>();
  const add = (encoding: string, form: string) => {
    if (![...forms.values()].includes(form)) forms.set(encoding, form);
  };
  add('raw', value);
  add('JSON-escaped', JSON.stringify(value).slice(1, -1));
  add('percent-encoded', encodeURIComponent(value));
  add('form-encoded', encodeURIComponent(value).replaceAll('%20', '+'));
  add('percent-encoded bytes', percentEveryByte(value, true));
  add('percent-encoded bytes (lower case)', percentEveryByte(value, false));
  base64Forms(value).forEach((form, shift) => {
    add(`base64 (shift ${shift})`, form);
    add(`base64url (shift ${shift})`, form.replaceAll('+', '-').replaceAll('/', '_'));
  });
  return forms;
}

function excerptAround(text: string, at: number, length: number): string {
  const before = text.slice(Math.max(0, at - 60), at);
  const after = text.slice(at + length, at + length + 60);
  return `${before}<secret>${after}`.replace(/\s+/g, ' ');
}

const PREFIX = MIN_LENGTH;

/** Secrets a process prints for its operator: API keys, and the demo accounts' `name / password`. */
const PRINTED_SECRETS = /\b(cms_[\w-]{20,})|(?:User|Administrator): +\S+ \/ (\S+)/g;

/** A UUID (request ids, in every log line), whose groups of four digits could spell a short code. */
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/**
 * The text with its UUIDs blanked out (same length, so places stay): a random identifier the
 * service makes is no carrier of a code, yet one of its groups is a whole word by itself.
 */
function withoutUuids(text: string): string {
  return text.replace(UUID, (uuid) => ' '.repeat(uuid.length));
}

/** Every secret found in the texts: one entry per secret and source. */
export function findLeaks(texts: readonly Kept[], secrets: readonly Secret[]): Leak[] {
  // Needles indexed by their first characters: one pass over each text, whatever the number of secrets.
  const needles = new Map<string, { form: string; encoding: string; secret: Secret }[]>();
  const words = new Map<string, Secret>();
  for (const secret of secrets) {
    if (secret.kind === 'word') {
      words.set(secret.value.toUpperCase(), secret);
      continue;
    }
    for (const [encoding, form] of encodingsOf(secret.value)) {
      const key = form.slice(0, PREFIX);
      const list = needles.get(key) ?? [];
      list.push({ form, encoding, secret });
      needles.set(key, list);
    }
  }
  const leaks: Leak[] = [];
  const seen = new Set<string>();
  const report = (secret: Secret, encoding: string, kept: Kept, at: number, length: number) => {
    const id = `${secret.label}\u0000${kept.source}`;
    if (seen.has(id)) return;
    seen.add(id);
    leaks.push({
      label: secret.label,
      encoding,
      source: kept.source,
      excerpt: excerptAround(kept.text, at, length),
    });
  };
  for (const kept of texts) {
    const { text } = kept;
    if (needles.size > 0) {
      for (let at = 0; at + PREFIX <= text.length; at++) {
        const candidates = needles.get(text.slice(at, at + PREFIX));
        if (candidates === undefined) continue;
        for (const { form, encoding, secret } of candidates)
          if (text.startsWith(form, at)) report(secret, encoding, kept, at, form.length);
      }
    }
    if (words.size > 0) {
      for (const match of withoutUuids(text).matchAll(/[A-Za-z0-9]+/g)) {
        const secret = words.get(match[0]);
        if (secret !== undefined) report(secret, 'raw', kept, match.index, match[0].length);
      }
    }
  }
  return leaks;
}

/** One file's secrets and kept texts. Tests of the checker make their own; the support uses `leaks`. */
export class LeakCollector {
  private readonly secrets = new Map<string, Secret>();
  private readonly texts: Kept[] = [];
  private readonly plainValues = new Set<string>();
  private readonly live: { source: string; read: () => string; known: Set<string> }[] = [];

  /** Registers a secret; values too short or too long to be credentials are ignored. */
  secret(value: unknown, label: string, kind: Secret['kind'] = 'text', sent = false): void {
    if (typeof value !== 'string') return;
    if (kind === 'text' && (value.length < MIN_LENGTH || value.length > MAX_LENGTH)) return;
    if (kind === 'word' && !/^[A-Z0-9]{4,}$/.test(value)) return;
    const known = this.secrets.get(value);
    // Issued beats sent: a key the API issued stays a secret even if a client also sends it oddly.
    if (known === undefined || (known.sent && !sent)) this.secrets.set(value, { value, label, kind, sent });
  }

  /**
   * A password as sent: itself and its MD5 digests (what logins send) are secrets. A value a client
   * sends in a password field is taken for a password only when it looks like one (a letter and a
   * digit, no white space): generated test data (the fuzzer's words) would otherwise match by chance.
   */
  password(value: unknown, label: string, sent = false): void {
    if (typeof value !== 'string' || value.length < MIN_LENGTH) return;
    if (sent && !(/[A-Za-z]/.test(value) && /\d/.test(value) && !/\s/.test(value))) return;
    this.secret(value, label, 'text', sent);
    if (!/^[0-9a-fA-F]{32}$/.test(value)) {
      const digest = createHash('md5').update(value).digest('hex');
      this.secret(digest, `MD5 of ${label}`, 'text', sent);
      this.secret(digest.toUpperCase(), `MD5 of ${label}`, 'text', sent);
    }
  }

  /**
   * A value sent that is shaped like one of the service's secrets (registerShaped): a secret even if
   * also sent as plain data; one already known keeps its registration.
   */
  shaped(value: string, label: string): void {
    if (!this.secrets.has(value)) this.secret(value, label);
  }

  /** A value a client sent as ordinary data (a path segment, a query or body value): not a secret of the file. */
  plain(value: unknown): void {
    if (typeof value === 'string' && value.length >= MIN_LENGTH) this.plainValues.add(value);
  }

  /** Keeps a text for the scan: a long one (a big export) by its first and last megabyte. */
  keep(source: string, text: string): void {
    const kept =
      text.length > 2 * KEPT_EDGE ? `${text.slice(0, KEPT_EDGE)}\n…\n${text.slice(-KEPT_EDGE)}` : text;
    this.texts.push({ source, text: kept });
  }

  /** A destination for pino: every line is kept as a log line. */
  logDestination(source = 'log'): { write(line: string): void } {
    return { write: (line: string) => this.keep(source, line) };
  }

  /**
   * A process's output, read when the file ends. JSON lines are its log, checked for every secret;
   * its other lines are its console answer (a bootstrap key, a CLI's new key), where only the
   * secrets known before the process started must not appear.
   */
  watchProcess(source: string, read: () => string): void {
    this.live.push({ source, read, known: new Set(this.secrets.keys()) });
  }

  /** Everything found so far. */
  leaks(): Leak[] {
    const texts = [...this.texts];
    const consoles: { source: string; text: string; known: Set<string> }[] = [];
    for (const { source, read, known } of this.live) {
      const lines = read().split('\n');
      const isLog = (line: string) => line.trimStart().startsWith('{');
      const console = lines.filter((line) => !isLog(line)).join('\n');
      // What a console shows once (a bootstrap key, demo passwords) is issued there: secret from then on.
      for (const match of console.matchAll(PRINTED_SECRETS))
        this.secret(
          match[1] ?? match[2],
          match[1] ? 'API key printed by a process' : 'password printed by a process',
        );
      texts.push({ source: `${source} (log)`, text: lines.filter(isLog).join('\n') });
      consoles.push({ source: `${source} (console)`, text: console, known });
    }
    const all = [...this.secrets.values()].filter(
      (secret) => !(secret.sent && (this.plainValues.has(secret.value) || isPublished(secret.value))),
    );
    return [
      ...findLeaks(texts, all),
      ...consoles.flatMap(({ source, text, known }) =>
        findLeaks(
          [{ source, text }],
          all.filter((secret) => known.has(secret.value)),
        ),
      ),
    ];
  }

  /** A failure message naming each leak, or undefined when there is none. */
  report(): string | undefined {
    const leaks = this.leaks();
    if (leaks.length === 0) return undefined;
    const lines = leaks
      .slice(0, 30)
      .map((leak) => `- ${leak.label} (${leak.encoding}) in ${leak.source}: …${leak.excerpt}…`);
    return [
      `${leaks.length} secret(s) found in log lines or responses of this test file:`,
      ...lines,
      ...(leaks.length > 30 ? [`… and ${leaks.length - 30} more`] : []),
    ].join('\n');
  }

  get secretCount(): number {
    return this.secrets.size;
  }
}

/** The collector of the running test file (jest gives each file its own module registry). */
export const leaks = new LeakCollector();

/** What leakEnvironment.ts calls once every hook of the file has run. */
export const LEAK_CHECK = Symbol.for('cms.test.leakCheck');
(globalThis as unknown as Record<symbol, unknown>)[LEAK_CHECK] = () => leaks.report();

/**
 * What the service's own secrets look like — its API keys, access tokens (JWTs), captcha tokens —
 * found anywhere a client may put them (any header, any part of the URL, percent-encoded or not):
 * each one found is a secret of the file, whether or not the service reads it from there.
 */
const SECRET_SHAPES: [string, RegExp][] = [
  ['API-key-shaped', /cms_[A-Za-z0-9_-]{20,}/g],
  ['JWT-shaped', /eyJ[\w-]+\.[\w-]+\.[\w-]{10,}/g],
  ['captcha-token-shaped', /v1\.eyJ[\w-]+\.[\w-]{10,}/g],
];

function decodedForms(text: string): string[] {
  const forms = [text];
  try {
    forms.push(decodeURIComponent(text.replaceAll('+', ' ')));
  } catch {
    // A text that is not valid percent-encoding is checked as written only.
  }
  return forms;
}

function registerShaped(collector: LeakCollector, req: IncomingMessage): void {
  const places: [string, string][] = [['the URL', req.url ?? '']];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    places.push([`header ${req.rawHeaders[i]}`, req.rawHeaders[i + 1] ?? '']);
  for (const [where, text] of places)
    for (const form of decodedForms(text))
      for (const [kind, shape] of SECRET_SHAPES)
        for (const match of form.matchAll(shape))
          collector.shaped(match[0], `${kind} value sent in ${where}`);
}

const SECRET_BODY_FIELDS = /password$/i;
const SECRET_QUERY_NAMES = /api_?key|token|password/i;
/** Answer fields that issue a secret: it is registered, and that occurrence is not a leak. */
const ISSUING_FIELDS = ['accessToken', 'key'];

function registerSent(
  collector: LeakCollector,
  req: IncomingMessage & { body?: unknown; query?: unknown },
): void {
  const key = req.headers['x-ss-api-key'];
  collector.secret(typeof key === 'string' ? key : undefined, 'API key sent', 'text', true);
  const bearer = /^Bearer\s+(\S+)/i.exec(req.headers.authorization ?? '')?.[1];
  collector.secret(bearer, 'access token sent', 'text', true);
  const cookie = req.headers.cookie ?? '';
  for (const pair of cookie.split(';'))
    collector.secret(pair.split('=').slice(1).join('=').trim(), 'cookie sent', 'text', true);
  const [path = '', query = ''] = (req.url ?? '').split('?');
  for (const segment of path.split('/')) {
    try {
      collector.plain(decodeURIComponent(segment));
    } catch {
      collector.plain(segment);
    }
  }
  for (const [name, value] of new URLSearchParams(query)) {
    if (SECRET_QUERY_NAMES.test(name)) collector.secret(value, `${name} sent in the query`, 'text', true);
    else collector.plain(value);
  }
  const visit = (value: unknown, name: string, depth: number): void => {
    if (depth > 8) return;
    if (SECRET_BODY_FIELDS.test(name)) collector.password(value, `${name} sent`, true);
    else if (name === 'captcha' && typeof value === 'string')
      collector.secret(value.trim().toUpperCase(), 'captcha answer sent', 'word', true);
    else if (typeof value === 'string') collector.plain(value);
    else if (Array.isArray(value)) for (const item of value) visit(item, name, depth + 1);
    else if (value !== null && typeof value === 'object')
      for (const [inner, item] of Object.entries(value)) visit(item, inner, depth + 1);
  };
  visit(req.body, '', 0);
  registerShaped(collector, req);
}

function decodedBody(res: ServerResponse, chunks: Buffer[]): string | undefined {
  const type = String(res.getHeader('content-type') ?? '');
  if (type.startsWith('image/')) return undefined;
  const raw = Buffer.concat(chunks);
  const encoding = String(res.getHeader('content-encoding') ?? '');
  try {
    if (encoding === 'gzip') return gunzipSync(raw).toString();
    if (encoding === 'deflate') return inflateSync(raw).toString();
  } catch {
    return raw.toString();
  }
  return raw.toString();
}

/** The body with each issued secret's own field cut out; the secrets issued are registered. */
function withoutIssued(collector: LeakCollector, text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return text;
  let kept = text;
  for (const field of ISSUING_FIELDS) {
    const value = (parsed as Record<string, unknown>)[field];
    if (typeof value !== 'string') continue;
    collector.secret(value, field === 'key' ? 'API key issued' : 'access token issued');
    kept = kept.replace(`${JSON.stringify(field)}:${JSON.stringify(value)}`, `"${field}":"<issued>"`);
  }
  return kept;
}

/** An answer the support read from a process of the service: issued secrets cut, the rest kept. */
export function keepAnswer(source: string, text: string, collector: LeakCollector = leaks): void {
  collector.keep(source, withoutIssued(collector, text));
}

/**
 * Lets the collector see one exchange when it ends: credentials and passwords the client sent,
 * secrets the answer issued (body fields and cookies), and the answer's body.
 */
export function observeExchange(
  req: IncomingMessage & { body?: unknown },
  res: ServerResponse,
  collector: LeakCollector = leaks,
): void {
  const chunks: Buffer[] = [];
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  const take = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === 'string')
      chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
  };
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    take(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as ServerResponse['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'function') take(chunk, rest[0]);
    return end(chunk, ...rest);
  }) as ServerResponse['end'];
  res.once('finish', () => {
    registerSent(collector, req);
    for (const line of [res.getHeader('set-cookie') ?? []].flat())
      collector.secret(String(line).split(';')[0]?.split('=').slice(1).join('='), 'cookie issued');
    const body = decodedBody(res, chunks);
    if (body !== undefined && body !== '')
      keepAnswer(`response ${req.method} ${(req.url ?? '').split('?')[0]}`, body, collector);
  });
}

type Handle = (req: IncomingMessage, res: ServerResponse, next?: unknown) => void;

/**
 * Makes an express app show the collector every exchange, whichever way a test reaches it
 * (supertest, a listening server, the typed client): express calls `app.handle` for each request.
 */
export function observeApp(app: object, collector: LeakCollector = leaks): void {
  const target = app as { handle: Handle };
  const handle = target.handle.bind(app);
  target.handle = (req, res, next) => {
    observeExchange(req, res, collector);
    handle(req, res, next);
  };
}
