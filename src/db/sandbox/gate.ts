/*
 * Fair sharing of a sandbox (docs/security/sql-sandbox.md, "Fair sharing"): at most `capacity`
 * queries run at once (the one SQLite process, the PostgreSQL pool's connections), at most
 * `maxWaiting` wait behind them, and each caller (a key, an administrator, a user) holds at most
 * `perCaller` places, running or waiting. A query waits at most as long as the queries ahead of it
 * may take in all (their time limit each, and a few seconds to get a connection or a process).
 * Anything past a bound is answered at once with a 429 that says the sandbox is busy and when to
 * retry, instead of a queue that grows without end or a pool timeout that reads as "database
 * unavailable".
 */

/** What a query may cost before it runs: a connection of the pool, a sandbox process's start. */
const SETUP_ALLOWANCE_MS = 5000;

export interface GateLimits {
  capacity: number;
  maxWaiting: number;
  perCaller: number;
}

/**
 * The sandbox is busy; the client may retry after `retryAfterSeconds`. The domain words it as its
 * RateLimited (a 429 with Retry-After): the data layer knows nothing of the domain's errors.
 */
export class SandboxBusy extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'SandboxBusy';
  }
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout | undefined;
}

export class SandboxGate {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private readonly held = new Map<string, number>();

  constructor(readonly limits: GateLimits) {}

  /** Runs the task when a place is free; `timeoutMs` is a query's time limit (undefined: none). */
  async run<T>(caller: string, timeoutMs: number | undefined, task: () => Promise<T>): Promise<T> {
    // A refused caller is told to come back after about one query's time limit.
    const retryAfter = Math.max(1, Math.ceil((timeoutMs ?? 1000) / 1000));
    const held = this.held.get(caller) ?? 0;
    if (held >= this.limits.perCaller) {
      throw new SandboxBusy(
        `The SQL sandbox is busy: this caller already has ${held} queries running or waiting (at most ${this.limits.perCaller}); retry in ${retryAfter} s`,
        retryAfter,
      );
    }
    if (this.running >= this.limits.capacity && this.waiting.length >= this.limits.maxWaiting) {
      throw new SandboxBusy(
        `The SQL sandbox is busy: every place to run or wait is taken; retry in ${retryAfter} s`,
        retryAfter,
      );
    }
    this.held.set(caller, held + 1);
    try {
      if (this.running < this.limits.capacity) this.running++;
      else {
        // The queries ahead end within this many rounds of a time limit each, plus what a query
        // costs besides running (a pool connection, a SQLite sandbox process starting again).
        const rounds = Math.ceil((this.waiting.length + 1) / this.limits.capacity);
        await this.wait(
          timeoutMs === undefined ? undefined : rounds * (timeoutMs + SETUP_ALLOWANCE_MS),
          retryAfter,
        );
      }
      try {
        return await task();
      } finally {
        this.release();
      }
    } finally {
      const left = (this.held.get(caller) ?? 1) - 1;
      if (left > 0) this.held.set(caller, left);
      else this.held.delete(caller);
    }
  }

  /** Queries running and waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  private wait(maxWaitMs: number | undefined, retryAfter: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: undefined,
      };
      if (maxWaitMs !== undefined) {
        waiter.timer = setTimeout(() => {
          const index = this.waiting.indexOf(waiter);
          if (index >= 0) this.waiting.splice(index, 1);
          reject(
            new SandboxBusy(
              `The SQL sandbox is busy: this query waited ${maxWaitMs} ms for its turn; retry in ${retryAfter} s`,
              retryAfter,
            ),
          );
        }, maxWaitMs);
      }
      this.waiting.push(waiter);
    });
  }

  /** The place just freed goes to the first waiter (the running count stays), else is given back. */
  private release(): void {
    const next = this.waiting.shift();
    if (next === undefined) this.running--;
    else next.start();
  }
}
