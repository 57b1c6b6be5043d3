import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ContractOperation } from '../contract.ts';
import { type Principal, principalName } from '../domain/principal.ts';
import { describeError } from '../errorSummary.ts';
import type { SharedState } from '../state/port.ts';
import { ProblemError, problem } from './problem.ts';

/*
 * Safe retries of creates (`x-idempotent` operations, docs/api/conditional-writes.md). A request
 * with an Idempotency-Key first claims the key in the shared state (set-if-absent, so of two
 * requests on any nodes exactly one runs); the claim holds a fingerprint of the request's input.
 * When the handler succeeds, the claim is replaced (compare-and-set) by the result; when it fails,
 * the claim is dropped, so the client may send the key again. A later request with the key gets
 * the stored result if its fingerprint is the same (replay), 422 if not, 409 while the claim is
 * still pending.
 *
 * Keys are scoped to the caller: the stored key is a hash of the principal and the client's key,
 * so one caller can neither read nor block another's results. Results are stored encrypted
 * (AES-256-GCM with a key derived from the service's secret, bound to their stored key), because
 * some are shown only once (a new API key, a webhook's secret): the shared state (Redis, a table)
 * never holds them in clear.
 */

/**
 * How long a claim holds while its request runs: far longer than any create takes (statements
 * stop after 15 s), short enough that a node that died mid-request frees the key soon.
 */
export const PENDING_LEASE_MS = 60_000;

/** A success as the dispatcher sends it. */
export interface StoredReply {
  status: number;
  headers?: Readonly<Record<string, string>> | undefined;
  mediaType?: string | undefined;
  body?: unknown;
}

interface Pending {
  state: 'pending';
  fingerprint: string;
  /** Tells this claim from a later one of the same key (compare-and-set). */
  claim: string;
}

interface Done {
  state: 'done';
  fingerprint: string;
  /** The encrypted StoredReply: base64 of IV, tag and ciphertext. */
  result: string;
}

export type IdempotentStart =
  | { kind: 'replay'; reply: StoredReply }
  | {
      kind: 'claimed';
      /** Stores the handler's success for the key's retries. Never throws. */
      complete(reply: StoredReply): Promise<void>;
      /** Drops the claim after a failure, so the key may be sent again. Never throws. */
      release(): Promise<void>;
    };

/** Whose keys these are: the API key, or the account behind a token. */
function callerOf(principal: Principal): string {
  // The contract refuses x-idempotent on public operations (src/contract.ts).
  if (principal.kind === 'anonymous') throw new Error('An idempotent operation was reached without a caller');
  return principalName(principal);
}

/** JSON with object members in sorted order, so the same input always hashes alike. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonical(member)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

function inFlight(): ProblemError {
  return new ProblemError(
    problem(
      409,
      'The first request sent with this Idempotency-Key is still running; retry a moment later to get its result',
      { kind: 'idempotency-key-in-flight' },
    ),
  );
}

function reused(): ProblemError {
  return new ProblemError(
    problem(
      422,
      'This Idempotency-Key was used with another request (another operation, path or body); use a new key for a new request',
      { kind: 'idempotency-key-reused' },
    ),
  );
}

export class IdempotencyKeys {
  private readonly encryptionKey: Buffer;

  constructor(
    private readonly state: SharedState,
    secret: string,
    /** How long a success is kept for retries (IDEMPOTENCY_KEY_SECONDS). */
    private readonly retentionMs: number,
    private readonly logger: Logger,
  ) {
    this.encryptionKey = Buffer.from(
      hkdfSync('sha256', secret, Buffer.alloc(0), 'cms idempotency results v1', 32),
    );
  }

  /**
   * Claims `key` for this request, or answers what an earlier request with it decides: its stored
   * result (same input), 422 (other input), 409 (still running).
   */
  async start(
    operation: ContractOperation,
    principal: Principal,
    key: string,
    input: { path: unknown; query: unknown; body: unknown },
  ): Promise<IdempotentStart> {
    const storeKey = `idempotency:${sha256(`${callerOf(principal)}\0${key}`)}`;
    const fingerprint = sha256(
      canonical({ operation: operation.operationId, path: input.path, query: input.query, body: input.body }),
    );
    const pending = JSON.stringify({ state: 'pending', fingerprint, claim: randomUUID() } satisfies Pending);
    // A value that expires or is dropped between the put and the get is claimed on the next turn.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await this.state.putValue(storeKey, pending, Math.min(PENDING_LEASE_MS, this.retentionMs))) {
        return this.claimed(storeKey, pending, fingerprint);
      }
      const stored = await this.state.getValue(storeKey);
      if (stored === undefined) continue;
      const record = JSON.parse(stored) as Pending | Done;
      if (record.fingerprint !== fingerprint) throw reused();
      if (record.state === 'pending') throw inFlight();
      return { kind: 'replay', reply: this.decrypt(storeKey, record.result) };
    }
    throw inFlight();
  }

  private claimed(storeKey: string, pending: string, fingerprint: string): IdempotentStart {
    return {
      kind: 'claimed',
      complete: async (reply) => {
        const done: Done = { state: 'done', fingerprint, result: this.encrypt(storeKey, reply) };
        try {
          const stored = await this.state.replaceValue(
            storeKey,
            pending,
            JSON.stringify(done),
            this.retentionMs,
          );
          if (!stored)
            this.logger.warn('idempotency: a claim ended before its request did; its result is not kept');
        } catch (error) {
          // The record exists: its answer is still sent, only not kept for retries.
          this.logger.warn({ err: describeError(error) }, 'idempotency: a result could not be kept');
        }
      },
      release: async () => {
        try {
          await this.state.deleteValue(storeKey, pending);
        } catch {
          // The claim then ends with its lease.
        }
      },
    };
  }

  private encrypt(storeKey: string, reply: StoredReply): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, iv);
    cipher.setAAD(Buffer.from(storeKey));
    const text = Buffer.concat([cipher.update(JSON.stringify(reply), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), text]).toString('base64');
  }

  /** A result stored under another secret (CMS_SECRET changed since) cannot be read: 422. */
  private decrypt(storeKey: string, result: string): StoredReply {
    try {
      return this.decryptWith(storeKey, result);
    } catch {
      throw new ProblemError(
        problem(
          422,
          "The result kept for this Idempotency-Key can no longer be read (the service's secret changed); use a new key",
          { kind: 'idempotency-key-reused' },
        ),
      );
    }
  }

  private decryptWith(storeKey: string, result: string): StoredReply {
    const bytes = Buffer.from(result, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(storeKey));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const text = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as StoredReply;
  }
}
